"""The run screen's proposals: which wait for a decision, their modal, its live loss chart.

A proposal reaches the screen through the stream (`proposal.*` events, in the tracker's
state) or, when the screen opens on a run that already waits, through one fetch
(`RunFollower`). The modal gets the run's loss as `ChartView`s pushed into its `loss`
reactive while it is on top (the `"loss"` panel of the screen's `Repaints`), computed
in `state/` at the width the modal's chart announces (`ProposalModal.loss_width`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ito_tui.textsafe import safe
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.telemetry import WINDOWS

if TYPE_CHECKING:
    from textual.screen import Screen

    from ito_tui.contract import EventBase, Proposal
    from ito_tui.state import LogEntry, RunTracker
    from ito_tui.state.views import ChartView
    from ito_tui.tui.repaint import Repaints

__all__ = ["LOSS_WINDOW_S", "RunProposals"]

LOSS_WINDOW, LOSS_WINDOW_S = WINDOWS[0]
"""The modal's loss chart shows the last 15 minutes (the time a spike escalates in), named
as the Telemetry tab's caption names that window (`15 min`)."""
LOSS_WIDTH = 48
"""Columns of the modal's loss chart until it is laid out and says its own width."""


class RunProposals:
    """The proposals of the run `tracker` follows, as its screen shows and opens them."""

    def __init__(self, screen: Screen[Any], tracker: RunTracker, repaints: Repaints) -> None:
        self.screen = screen
        self.tracker = tracker
        self.repaints = repaints
        self.fetched: dict[str, Proposal] = {}
        """Pending proposals fetched on open (a snapshot names them by id only)."""
        self.modal: ProposalModal | None = None
        """The live modal this screen opened last (its loss chart follows the run)."""

    def add(self, proposals: list[Proposal]) -> None:
        for proposal in proposals:
            self.fetched[proposal.proposal_id] = proposal

    def pending(self) -> list[Proposal]:
        """The run's pending proposals, oldest first (from events or fetched on open)."""
        s = self.tracker.state
        found = (s.proposals.get(pid) or self.fetched.get(pid) for pid in s.pending_proposals)
        return [p for p in found if p is not None]

    def strip_text(self) -> Text | None:
        """The line over the body while proposals wait (None: there are none)."""
        pending = self.pending()
        if not pending:
            return None
        ids = ", ".join(safe(p.proposal_id) for p in pending)
        return Text(f"⚠ NEEDS APPROVAL: {ids} waiting for a decision — press p")

    def changed(self, event: EventBase) -> bool:
        """Show a proposal's change; True if its modal was opened for it now."""
        proposal = getattr(event, "data").proposal  # noqa: B009 - dynamic event class
        top = self.screen.app.screen
        if isinstance(top, ProposalModal) and top.shows(proposal.proposal_id):
            top.proposal = proposal
            return False
        if event.type == "proposal.created" and str(proposal.status) == "pending":
            return self.open(proposal.proposal_id)
        return False

    def open(self, proposal_id: str | None = None) -> bool:
        """Open the modal for `proposal_id` (default: the oldest pending one); True if
        it was opened (not when there is none, or another proposal's is open)."""
        screen = self.screen
        proposal = next(
            (p for p in self.pending() if proposal_id in (None, p.proposal_id)),
            self.tracker.state.proposals.get(proposal_id or ""),
        )
        if proposal is None:
            screen.notify("No pending proposal for this run.", markup=False)
            return False
        if isinstance(screen.app.screen, ProposalModal):
            return False  # one decision at a time; the strip keeps showing the others
        session = shell(screen).session
        modal = ProposalModal(
            proposal,
            read_only=session.read_only,
            operator=session.operator,
            loss=self._loss(LOSS_WIDTH),
        )
        self.modal = modal
        # The chart's width is known once the modal is laid out: compute the view again.
        screen.watch(modal, "loss_width", self._loss_resized, init=False)
        screen.app.push_screen(modal)
        return True

    def _loss_resized(self) -> None:
        self.repaints.mark("loss")

    def _loss(self, width: int) -> ChartView:
        view = self.tracker.chart("loss", width, LOSS_WINDOW_S)
        return replace(view, sublabel=LOSS_WINDOW)

    def loss_shown(self) -> bool:
        """Whether the live modal is on top (its chart is painted only then)."""
        modal = self.modal
        return modal is not None and modal is self.screen.app.screen

    def paint_loss(self) -> None:
        """Push the run's current loss into the modal (the `"loss"` panel's paint)."""
        modal = self.modal
        if modal is not None:
            modal.loss = self._loss(modal.loss_width or LOSS_WIDTH)

    def unseen(self) -> frozenset[str]:
        """This run's proposals that expired while nobody had them open (the app knows)."""
        needs_you = getattr(self.screen.app, "needs_you", None)
        if needs_you is None:
            return frozenset()
        missed = needs_you.missed_for(self.tracker.run_id)
        return frozenset(m.proposal_id for m in missed if m.outcome == "expired" and not m.seen)

    def mark_unseen(self, entries: list[LogEntry]) -> list[LogEntry]:
        """`entries` with an expiry nobody here looked at saying so, as the runs list does."""
        unseen = self.unseen()
        if not unseen:
            return entries
        return [_unseen(e) if _expired_id(e) in unseen else e for e in entries]


def _expired_id(entry: LogEntry) -> str | None:
    """The proposal an expiry line is about (its event's), else None."""
    if entry.type != "proposal.expired":
        return None
    proposal = getattr(getattr(entry.event, "data", None), "proposal", None)
    return getattr(proposal, "proposal_id", None)


def _unseen(entry: LogEntry) -> LogEntry:
    """`proposal (…) expired unseen (prop_…)`: the mark before the id that ends the line."""
    text = entry.text
    head, sep, tail = text.rpartition(" (")
    return entry._replace(text=f"{head} unseen{sep}{tail}" if sep else f"{text} unseen")
