"""What a restart proposal says, as text: why, what, what it costs, and who decided."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.text import Text

from ito_tui.contract import Proposal
from ito_tui.describe import KIND_TITLES, action_phrases, evidence_phrases, impact_phrases

from .runfmt import duration, safe


def title_text(p: Proposal) -> Text:
    """The modal's heading: what is asked and of which run, or what became of it."""
    kind = KIND_TITLES.get(str(p.kind), safe(p.kind))
    if str(p.status) == "pending":
        return Text(f"⚠ NEEDS APPROVAL · {kind} · {safe(p.proposal_id)} · run {safe(p.run_id)}")
    return Text(
        f"Proposal {safe(p.proposal_id)} · {kind} · run {safe(p.run_id)} · {safe(p.status).upper()}"
    )


def waiting_text(p: Proposal, now: datetime) -> Text:
    """The line under the heading: the pause and the countdown, or when it was asked."""
    if str(p.status) != "pending":
        return asked_text(p)
    paused = "The run is PAUSED while this waits." if p.run_paused else "The run continues."
    left = (p.expires_at - now).total_seconds()
    expiry = (
        f"Expires in {duration(left)}; then it is {safe(p.on_expiry)}ed automatically."
        if left > 0
        else f"Expiring now; it will be {safe(p.on_expiry)}ed automatically."
    )
    return Text(f"{paused} {expiry}")


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


APPROVE_WORDS = {
    "rollback_and_skip": (
        "Approve restart…",
        "Approving restarts the run from the rollback point.",
    ),
    "reduce_lr": (
        "Approve LR change…",
        "Approving changes the run's learning rate as What says.",
    ),
    "extend_budget": (
        "Approve budget…",
        "Approving raises the run's budget as What says; the run is not restarted.",
    ),
    "replace_node": (
        "Approve node swap…",
        "Approving replaces the node What names.",
    ),
}
"""Per kind: the Approve button's label and what the confirmation step says it does."""


def approve_words(p: Proposal) -> tuple[str, str]:
    """The Approve button's label and the confirmation sentence for `p`'s kind."""
    return APPROVE_WORDS.get(
        str(p.kind), ("Approve…", "Approving applies the action What describes.")
    )


def utc_stamp(moment: datetime | None) -> str:
    """`2026-11-29 12:00:03 UTC`: a date and a UTC time, never a time alone."""
    if moment is None:
        return "an unrecorded time"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def asked_text(p: Proposal) -> Text:
    """When a decided proposal was asked and what the run did meanwhile (as recorded)."""
    waited = "was paused" if p.run_paused else "went on"
    return Text(f"Asked {utc_stamp(p.created_at)}; the run {waited} while it waited.")


def who_text(operator: str | None, *, read_only: bool) -> Text:
    """Who may decide a pending proposal (and under which name this terminal would)."""
    if read_only:
        return Text("Who   read-only display: decide from a terminal that may decide")
    who = "Who   any operator allowed to decide proposals on this backend"
    if operator:
        who += f"; yours is recorded as {safe(operator)}"
    return Text(who)


def decided_text(p: Proposal, *, by_someone_else: bool) -> Text:
    """Who decided what, when (date and UTC time) — or that it expired."""
    status = str(p.status)
    if status == "expired":
        # The backend records the expiry as `decided_at`; an older one may only have the
        # deadline.
        when = utc_stamp(p.decided_at or p.expires_at)
        return Text(
            f"This proposal EXPIRED unanswered ({when}) and was {safe(p.on_expiry)}ed as "
            "its expiry rule says. Nobody decided it.",
            style="bold",
        )
    who = safe(p.decided_by or "another operator")
    prefix = "Already decided by someone else: " if by_someone_else else "Decided: "
    verdict = "APPROVED (and carried out)" if status == "executed" else status.upper()
    text = Text(prefix, style="bold")
    text.append(f"{safe(verdict)} by {who} at {utc_stamp(p.decided_at)}.")
    if p.comment:
        text.append(" Comment: ")
        text.append(safe(p.comment))
    else:
        text.append(" No comment.")
    if by_someone_else:
        text.append("\nNothing more will be sent from here.")  # not read as the comment's
    return text
