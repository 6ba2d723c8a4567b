"""What a restart proposal says, as text: why, what, what it costs, and who decided."""

from __future__ import annotations

from rich.text import Text

from ito_tui.contract import Proposal
from ito_tui.describe import KIND_TITLES, action_phrases, evidence_phrases, impact_phrases

from .runfmt import safe


def why_text(p: Proposal) -> Text:
    text = Text("Why   ", style="bold")
    text.append(" · ".join([safe(p.trigger.reason), *evidence_phrases(p.trigger)]))
    return text


def what_text(p: Proposal) -> Text:
    text = Text("What  ", style="bold")
    text.append(KIND_TITLES.get(str(p.kind), safe(p.kind)))
    if phrases := action_phrases(p.action):
        text.append(": " + ", ".join(phrases))
    return text


def cost_text(p: Proposal) -> Text:
    text = Text("Cost  ", style="bold")
    text.append(" · ".join(impact_phrases(p.impact)))
    return text


def decided_text(p: Proposal, *, by_someone_else: bool) -> Text:
    """Who decided what, when — or that it expired."""
    status = str(p.status)
    when = p.decided_at.strftime("%H:%M:%S UTC") if p.decided_at else "earlier"
    if status == "expired":
        return Text(
            f"This proposal EXPIRED ({when}) and was {safe(p.on_expiry)}ed as its expiry rule "
            "says. Nothing was sent.",
            style="bold",
        )
    who = safe(p.decided_by or "another operator")
    prefix = "Already decided by someone else: " if by_someone_else else "Decided: "
    text = Text(prefix, style="bold")
    text.append(f"{status.upper()} by {who} at {when}.")
    if p.comment:
        text.append(" Comment: ")
        text.append(safe(p.comment))
    if by_someone_else:
        text.append(" Nothing more will be sent from here.")
    return text
