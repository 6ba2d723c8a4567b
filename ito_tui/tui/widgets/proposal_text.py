"""What a proposal says in the TUI's modal: the `ito_tui.describe` words (the CLI's), laid
out as the modal's lines: heading, wait, Why, What, Cost, Who, and the decision."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from ito_tui.contract import Proposal
from ito_tui.describe import (
    action_text,
    decision_text,
    evidence_text,
    expiry_text,
    paused_text,
    proposal_words,
)
from ito_tui.describe import (
    cost_text as cost_words,
)
from ito_tui.format import when
from ito_tui.textsafe import safe


def title_text(p: Proposal) -> Text:
    """The modal's heading: what is asked and of which run, or what became of it."""
    kind = proposal_words(p.kind).title
    if str(p.status) == "pending":
        return Text(f"⚠ NEEDS APPROVAL · {kind} · {safe(p.proposal_id)} · run {safe(p.run_id)}")
    return Text(
        f"Proposal {safe(p.proposal_id)} · {kind} · run {safe(p.run_id)} · {safe(p.status).upper()}"
    )


def waiting_text(p: Proposal, now: datetime) -> Text:
    """The line under the heading: the pause and the countdown, or when it was asked."""
    if str(p.status) != "pending":
        return asked_text(p, now)
    return Text(f"{paused_text(p)} {expiry_text(p, now)}")


def _labelled(label: str, text: str) -> Text:
    out = Text(f"{label:<6}", style="bold")
    out.append(text)
    return out


def why_text(p: Proposal) -> Text:
    """`Why   <reason> · step 10,871 · loss 3.159` (`describe.evidence_text`)."""
    return _labelled("Why", evidence_text(p))


def what_text(p: Proposal) -> Text:
    """`What  roll back to step 500, skip 300 batches` (`describe.action_text`)."""
    return _labelled("What", action_text(p))


def cost_text(p: Proposal) -> Text:
    """`Cost  1,071 lost steps · +12.4 GPU-h · +$31.00` (`describe.cost_text`)."""
    return _labelled("Cost", cost_words(p))


def asked_text(p: Proposal, now: datetime) -> Text:
    """When a decided proposal was asked and what the run did meanwhile (as recorded)."""
    waited = "was paused" if p.run_paused else "went on"
    return Text(f"Asked {when(p.created_at, now)}; the run {waited} while it waited.")


def who_text(operator: str | None, *, read_only: bool) -> Text:
    """Who may decide a pending proposal (and under which name this terminal would)."""
    if read_only:
        return Text("Who   read-only display: decide from a terminal that may decide")
    who = "Who   any operator allowed to decide proposals on this backend"
    if operator:
        who += f"; yours is recorded as {safe(operator)}"
    return Text(who)


def decided_text(p: Proposal, now: datetime, *, by_someone_else: bool) -> Text:
    """Who decided what, when (`describe.decision_text`) — or that it expired."""
    if str(p.status) == "expired":
        return Text(f"This proposal {decision_text(p, now)}. Nobody decided it.", style="bold")
    prefix = "Already decided by someone else: " if by_someone_else else "Decided: "
    text = Text(prefix, style="bold")
    text.append(f"{decision_text(p, now)}.")
    if p.comment:
        text.append(" Comment: ")
        text.append(safe(p.comment))
    else:
        text.append(" No comment.")
    if by_someone_else:
        text.append("\nNothing more will be sent from here.")  # not read as the comment's
    return text
