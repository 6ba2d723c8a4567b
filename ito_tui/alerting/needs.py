"""What needs the operator across runs: proposals pending, those missed while away, and
the runs gone silent.

Plain frozen values the `RunsWatcher` publishes (`NeedsYou`) and the screens draw: the
header's "needs you" counter, the jump to the most urgent proposal, and the
`expired unseen` / `decided by bob` marks on the runs list and in the event log.
Re-exported by `watcher`; defined apart so a widget can import them without the client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from ito_tui.textsafe import one_line

from .model import Alert

if TYPE_CHECKING:
    from ito_tui.contract import Proposal

__all__ = [
    "MAX_MISSED",
    "MissedProposal",
    "NeedsYou",
    "PendingProposal",
    "missed_alert",
    "missed_from",
    "pending_from",
]

MAX_MISSED = 200
"""Missed proposals kept (newest first): the app stays open for days."""


@dataclass(frozen=True)
class PendingProposal:
    """A proposal waiting for a person's decision."""

    run_id: str
    proposal_id: str
    kind: str
    expires_at: datetime | None
    stage: str | None


@dataclass(frozen=True)
class MissedProposal:
    """A proposal that left `pending` without this operator: expired, or decided by
    someone else."""

    run_id: str
    proposal_id: str
    kind: str
    outcome: Literal["expired", "decided"]
    by: str | None
    """Who decided it (`decided_by`), for outcome "decided"."""
    at: datetime
    seen: bool
    """Whether the operator had opened it (`RunsWatcher.mark_seen`) before it left."""

    def label(self) -> str:
        """`expired unseen`, `expired`, or `decided by bob` (the name is backend text:
        the screens render it literally)."""
        if self.outcome == "expired":
            return "expired" if self.seen else "expired unseen"
        return f"decided by {self.by or 'someone else'}"


def _urgency(p: PendingProposal) -> tuple[bool, float, str]:
    # Known expiries first, nearest first; ties (and no expiry) by id, so the order is stable.
    at = p.expires_at.timestamp() if p.expires_at is not None else 0.0
    return (p.expires_at is None, at, p.proposal_id)


@dataclass(frozen=True)
class NeedsYou:
    """Every pending proposal (nearest expiry first) and the missed ones (newest first)."""

    pending: tuple[PendingProposal, ...] = ()
    missed: tuple[MissedProposal, ...] = ()
    silent: frozenset[str] = frozenset()
    """Runs connected but silent (heartbeats, no progress for `stall_after_s`) now."""

    @classmethod
    def of(
        cls,
        pending: Iterable[PendingProposal],
        missed: Iterable[MissedProposal] = (),
        silent: Iterable[str] = (),
    ) -> NeedsYou:
        """A `NeedsYou` with `pending` put in order (nearest expiry first); `missed` is
        taken as given (newest first)."""
        return cls(tuple(sorted(pending, key=_urgency)), tuple(missed), frozenset(silent))

    def most_urgent(self) -> PendingProposal | None:
        """The pending proposal that expires first, or None."""
        return self.pending[0] if self.pending else None

    def missed_for(self, run_id: str) -> tuple[MissedProposal, ...]:
        """The missed proposals of one run, newest first."""
        return tuple(m for m in self.missed if m.run_id == run_id)


def pending_from(proposal: Proposal, stage: str | None = None) -> PendingProposal:
    """The `PendingProposal` of a pending `proposal` (`stage`: the run's current one)."""
    return PendingProposal(
        proposal.run_id, proposal.proposal_id, str(proposal.kind), proposal.expires_at, stage
    )


def missed_from(
    proposal: Proposal, *, operator: str | None, seen: bool, now: datetime
) -> MissedProposal | None:
    """What a proposal that left `pending` means for this operator: expired (also a
    rejection nobody made: `on_expiry` rejects), decided by someone else, or None (still
    pending, decided by `operator`, or a status this client does not know)."""
    status = str(proposal.status)
    by = proposal.decided_by
    at = proposal.decided_at or now
    if status == "expired" or (status == "rejected" and by is None):
        outcome: Literal["expired", "decided"] = "expired"
        by = None
    elif status in ("approved", "rejected", "executed"):
        if operator is not None and by == operator:
            return None
        outcome = "decided"
    else:
        return None
    return MissedProposal(
        proposal.run_id, proposal.proposal_id, str(proposal.kind), outcome, by, at, seen
    )


def missed_alert(missed: MissedProposal, status: str) -> Alert:
    """The `proposal_missed` alert of `missed` (`status`: what the proposal became)."""
    run, kind = one_line(missed.run_id), one_line(missed.kind)
    if missed.outcome == "expired":
        summary = f"{run}: the {kind} proposal {missed.label()} (rejected on expiry)."
    else:
        by = one_line(missed.by or "someone else")
        summary = f"{run}: the {kind} proposal was {one_line(status)} by {by}."
    return Alert(
        "proposal_missed",
        missed.run_id,
        "Proposal missed",
        summary,
        at=missed.at,
        proposal_id=missed.proposal_id,
    )
