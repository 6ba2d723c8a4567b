"""DecisionsScreen: every proposal across runs, newest first — the decision trail.

Who decided what, when (a date and a UTC time), with which comment: `GET /v1/proposals`,
every page. The filters (status, run, operator) apply to what was fetched, at once and
without a request per key. While the screen is on top it re-reads only what can still
change — the proposals created since the oldest one still pending or approved, or since
the newest one — and arms the next poll only after the last one finished, so requests
never overlap. Enter opens a proposal: the decision modal while it is pending (read-only
in a read-only session), its record once decided or expired.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static
from textual.worker import Worker, WorkerState

from ito_tui.contract import Proposal
from ito_tui.format import when
from ito_tui.textsafe import one_line
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.messages import Reconnected
from ito_tui.tui.screens.proposal import review_modal
from ito_tui.tui.session import poll_interval, shell
from ito_tui.tui.widgets.decision_table import STATUS_FILTERS, STATUS_MATCH, DecisionTable, matches
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.proposal_text import why_text
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput

if TYPE_CHECKING:
    from ito_tui.alerting.needs import NeedsYou

STILL_OPEN = frozenset({"pending", "approved"})
"""Statuses a proposal can still leave (approved → executed): what a poll re-reads."""


class DecisionsScreen(StyledOnFirstShow, Screen[None]):
    """Every proposal across runs; Enter opens one, `s` and `f` filter, `r` refreshes."""

    CSS_PATH = "decisions.tcss"
    AUTO_FOCUS = "#decisions-table"

    BINDINGS = [
        Binding(
            "enter",
            "open",
            "Open",
            id="decisions.open",
            tooltip="Open the highlighted proposal: decide a pending one, read a decided one",
        ),
        Binding(
            "s", "cycle_status", "Status", id="decisions.status", tooltip="Cycle the status filter"
        ),
        Binding(
            "f",
            "filter",
            "Filter",
            id="decisions.filter",
            tooltip="Filter by run and operator (Tab between the two, Enter back to the list)",
        ),
        Binding("r", "refresh", "Refresh", id="decisions.refresh", tooltip="Read everything again"),
        Binding(
            "escape", "back", "Back", id="decisions.back", tooltip="Back to the previous screen"
        ),
    ]

    @dataclass
    class Refreshed(Message):
        """The trail was read (used by tests)."""

        count: int

    def __init__(self, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.proposals: dict[str, Proposal] = {}
        self.status_filter: str | None = None
        self.run_filter = ""
        self.by_filter = ""
        self.fetches = 0
        self.error: str | None = None
        """Why the last read failed (safe to show), until one succeeds."""
        self._failures = 0
        self._timer: Timer | None = None
        self._ticker: Timer | None = None
        self._unseen: frozenset[str] = frozenset()
        """Proposals the app's watcher saw leave `pending` while nobody looked."""
        self._full = True
        """The next read is of every page (first, `r`); later polls read what can change."""

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection=session.connection,
            demo=session.demo,
            title="Decisions",
        )
        yield Static(id="decisions-caption", markup=False)
        with Horizontal(id="decisions-filters"):
            yield Static("run", classes="filter-label", markup=False)
            yield SteadyInput(placeholder="any (part of a run id)", id="filter-run", compact=True)
            yield Static("by", classes="filter-label", markup=False)
            yield SteadyInput(placeholder="anyone (operator)", id="filter-by", compact=True)
        yield Static(id="decisions-empty", markup=False)
        yield DecisionTable(id="decisions-table")
        yield Static(id="decisions-detail", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._unseen = _unseen(getattr(self.app, "needs_you", None))
        self.query_one(DecisionTable).loading = True
        self._caption()
        self._fetch()

    def on_screen_suspend(self) -> None:
        # Nobody sees the trail while another screen is on top: stop polling.
        for timer in (self._timer, self._ticker):
            if timer is not None:
                timer.stop()
        self._timer = self._ticker = None

    def on_reconnected(self, event: Reconnected) -> None:
        """Connected again in place (ctrl+l): read the trail again if it is on screen."""
        if self.app.screen is self:
            self._fetch()

    def on_screen_resume(self) -> None:
        # Back from a proposal's modal, say: read what it may have changed.
        if self.is_mounted and self.fetches:
            self._fetch()

    def on_needs_you_changed(self, event: Message) -> None:
        """The app's watcher's news: mark the proposals that expired unseen (the poll
        brings the rest)."""
        unseen = _unseen(getattr(event, "needs_you", None))
        if unseen != self._unseen:
            self._unseen = unseen
            self._fill()

    # ------------------------------------------------------------ reading

    @work(exclusive=True, group="decisions-fetch", exit_on_error=False)
    async def _fetch(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        since = None if self._full else self._since()
        found = await shell(self).client.all_proposals(since=since)
        if since is None:
            self.proposals = {p.proposal_id: p for p in found}
        else:
            self.proposals.update((p.proposal_id, p) for p in found)
        self._full = False
        self.fetches += 1
        self.error = None
        self.query_one(DecisionTable).loading = False
        self._fill()
        self.post_message(self.Refreshed(len(self.proposals)))

    def _since(self) -> datetime | None:
        """Where a poll starts: the oldest proposal that can still change, else the newest
        one (None: read everything)."""
        known = self.proposals.values()
        still_open = [p.created_at for p in known if str(p.status) in STILL_OPEN]
        if still_open:
            return min(still_open)
        return max((p.created_at for p in known), default=None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        finished = (WorkerState.SUCCESS, WorkerState.ERROR)
        if event.worker.group != "decisions-fetch" or event.state not in finished:
            return
        if event.state == WorkerState.ERROR:
            self._failures += 1
            self.error = one_line(str(event.worker.error))
            self.query_one(DecisionTable).loading = False
            self._fill()
            if self._failures == 1:
                forward_failure(self, event)  # the app's sink once; no toast per poll
        else:
            self._failures = 0
        if self.app.screen is self:
            # Arm the next poll only now that this one finished: requests never overlap.
            self._timer = self.set_timer(poll_interval(self), self._fetch)

    # ------------------------------------------------------------ table

    def shown(self) -> list[Proposal]:
        """The proposals the filters let through, newest first."""
        found = [
            p
            for p in self.proposals.values()
            if matches(p, self.status_filter, self.run_filter, self.by_filter)
        ]
        found.sort(key=lambda p: (p.created_at, p.proposal_id), reverse=True)
        return found

    def _fill(self) -> None:
        """Show the filtered trail, the caption, the empty state and the detail line."""
        shown = self.shown()
        table = self.query_one(DecisionTable)
        table.show(shown, shell(self).session.clock(), self._unseen)
        self._caption()
        self._empty(bool(shown))
        self._detail()
        self._arm_ticker(any(str(p.status) == "pending" for p in shown))

    def _arm_ticker(self, pending: bool) -> None:
        """Count pending rows down once a second, only while some are shown."""
        if pending and self._ticker is None and self.app.screen is self:
            self._ticker = self.set_interval(1.0, self._fill)
        elif not pending and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _caption(self) -> None:
        status = self.status_filter or "all"
        if self.status_filter in STATUS_MATCH:
            status += " or carried out"
        total = len(self.proposals)
        pending = sum(1 for p in self.proposals.values() if str(p.status) == "pending")
        parts = [
            f"status: {status} (s)",
            f"run: {one_line(self.run_filter) or 'any'}",
            f"by: {one_line(self.by_filter) or 'anyone'} (f)",
            f"{len(self.shown())} of {total} proposals",
        ]
        if pending:
            parts.append(f"{pending} pending")
        if self.error is not None and self.fetches:
            parts = [f"Could not refresh: {self.error} — retrying (r: now)"]
        self.query_one("#decisions-caption", Static).update(Text(" · ".join(parts)))

    def _empty(self, any_shown: bool) -> None:
        """Say why the table is empty, worded for a person (or why nothing was read)."""
        loading = not self.fetches and self.error is None
        if any_shown or loading:
            message = ""
        elif self.error is not None and not self.fetches:
            message = f"Could not read the decisions: {self.error}. Retrying; r tries now."
        elif not self.proposals:
            message = (
                "No proposals on this backend yet. When a run needs a person's decision — "
                "a loss spike to roll back, a budget running out — it is asked here, and "
                "who decided it stays on record."
            )
        else:
            message = (
                "No proposal matches these filters: s cycles the status, f edits the run "
                "and operator filters (empty them to see every proposal)."
            )
        empty = self.query_one("#decisions-empty", Static)
        empty.update(Text(message))
        self.set_class(bool(message), "-empty")

    def _detail(self) -> None:
        """The highlighted proposal in full: id, when it was asked, why, its comment."""
        p = self.selected()
        detail = self.query_one("#decisions-detail", Static)
        if p is None:
            detail.update("")
            return
        asked = when(p.created_at, shell(self).session.clock())
        text = Text(f"{one_line(p.proposal_id)} · asked {asked}\n")
        text.append_text(why_text(p))
        text.append("\nComment  ", style="bold")
        text.append(one_line(p.comment) if p.comment else "none")
        detail.update(text)

    def selected(self) -> Proposal | None:
        """The highlighted proposal, if any."""
        selected = self.query_one(DecisionTable).selected_id()
        return None if selected is None else self.proposals.get(selected)

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":
            return self.is_mounted and self.selected() is not None
        if action == "back":
            return isinstance(self.focused, Input) or len(self.app.screen_stack) > 1
        return True

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self._detail()
        self.refresh_bindings()

    def action_open(self) -> None:
        p = self.selected()
        if p is not None:
            self.app.push_screen(review_modal(p, shell(self).session))

    def action_cycle_status(self) -> None:
        i = STATUS_FILTERS.index(self.status_filter)
        self.status_filter = STATUS_FILTERS[(i + 1) % len(STATUS_FILTERS)]
        self._fill()

    def action_filter(self) -> None:
        self.add_class("-filtering")
        self.query_one("#filter-run", Input).focus()

    @on(Input.Changed)
    def _filter_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter-run":
            self.run_filter = event.value.strip()
        elif event.input.id == "filter-by":
            self.by_filter = event.value.strip()
        self._fill()

    @on(Input.Submitted)
    def _filter_done(self) -> None:
        self._to_table()

    def _to_table(self) -> None:
        """Back to the list; the filter row stays only while a filter is set."""
        self.set_class(bool(self.run_filter or self.by_filter), "-filtering")
        self.query_one(DecisionTable).focus()

    def action_refresh(self) -> None:
        self._full = True
        self._fetch()

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self._to_table()  # Esc leaves the filter, not the screen
        elif len(self.app.screen_stack) > 1:
            self.app.pop_screen()


def _unseen(needs_you: NeedsYou | None) -> frozenset[str]:
    """Proposals the app's watcher saw expire while nobody looked (`expired unseen`; one
    decided by someone else says who in its own column)."""
    missed = getattr(needs_you, "missed", ())
    return frozenset(m.proposal_id for m in missed if m.outcome == "expired" and not m.seen)
