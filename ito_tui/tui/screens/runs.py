"""RunsScreen: every run on the backend, with pending proposals flagged; open, filter, cancel.

The list refreshes by polling `GET /v1/runs` (there is no list stream), and the next
poll is armed only after the last one finished, so requests never overlap. The table is
rebuilt only when a row actually changed, so an idle list writes nothing to the terminal.
What the app's watcher knows across runs (`NeedsYouChanged`) adds the time left to a
pending proposal (`⚠ 1 to approve · 2m10s`, counted down while one waits) and marks a
run whose proposal was missed: `expired unseen`, `decided by bob`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from ito_tui.contract import RunSummary
from ito_tui.textsafe import safe
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.messages import NeedsYouChanged, Reconnected
from ito_tui.tui.runs_marks import RunMarks
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.session import poll_interval, shell
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.steady_footer import SteadyFooter

from . import runs_table
from .runs_table import COLUMNS as COLUMNS
from .runs_table import TERMINAL, Columns, fit, marks_of
from .runs_table import row_of as row_of

if TYPE_CHECKING:
    from ito_tui.alerting.needs import NeedsYou
    from ito_tui.tui.commands import Navigator

STATE_FILTERS: tuple[str | None, ...] = (
    None,
    "active",
    "awaiting_approval",
    "running",
    "completed",
    "failed",
    "cancelled",
)
"""What the filter key cycles through; `active` is every state that has not ended."""


def matches(run: RunSummary, state_filter: str | None) -> bool:
    if state_filter is None:
        return True
    if state_filter == "active":
        return str(run.state) not in TERMINAL
    return str(run.state) == state_filter


class RunsScreen(StyledOnFirstShow, RunMarks):
    """All runs; Enter opens one. It is the start screen when the operator has active runs."""

    DEFAULT_CSS = """
    RunsScreen #runs-caption { height: 1; padding: 0 1; color: $text-muted; }
    RunsScreen DataTable { height: 1fr; }
    RunsScreen > .runs--badge { color: $needs-human; text-style: bold reverse; }
    RunsScreen > .runs--failed { color: $gate-failed; text-style: bold; }
    RunsScreen > .runs--marked { text-style: bold reverse; }
    """
    COMPONENT_CLASSES = {"runs--badge", "runs--failed", "runs--marked"}

    BINDINGS = [
        Binding("enter", "open", "Open", id="runs.open", tooltip="Open the run's pipeline"),
        Binding("s", "cycle_filter", "Filter", id="runs.filter", tooltip="Cycle the state filter"),
        Binding("r", "refresh", "Refresh", id="runs.refresh", tooltip="Refresh the list now"),
        Binding(
            "p",
            "review",
            # "Review": the row's `⚠ 1 to approve` says what; at 80 columns the longer
            # words pushed Quit and Help out of the footer.
            "Review",
            id="runs.review",
            tooltip="Open the highlighted run to review its pending proposal",
        ),
        Binding(
            "x",
            "cancel_run",
            "Cancel run",
            id="runs.cancel",
            tooltip="Cancel the highlighted run (asks first)",
        ),
        Binding(
            "n",
            "new_run",
            "New run",
            id="runs.new_run",
            tooltip="A new run from the highlighted run's spec: the form opens filled (nothing is "
            "sent before its confirm)",
        ),
        Binding(
            "d",
            "decisions",
            "Decisions",
            id="runs.decisions",
            tooltip="Every proposal across runs: who decided what, when",
        ),
        Binding("escape", "back", "Back", id="runs.back", tooltip="Back to the previous screen"),
    ]

    @dataclass
    class Refreshed(Message):
        """The list was fetched (used by tests and the palette)."""

        count: int

    def __init__(self, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.runs: list[RunSummary] = []
        self.state_filter: str | None = None
        self._rows: tuple[tuple[str, ...], ...] = ()
        self._columns: Columns | None = None
        self._timer: Timer | None = None
        self.fetches = 0
        self._failures = 0
        self._caption_text = ""

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection=session.connection,
            demo=session.demo,
            title="Runs",
        )
        yield Static(id="runs-caption", markup=False)
        table: DataTable[object] = DataTable(cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._caption()
        self._fetch()

    def on_screen_suspend(self) -> None:
        # Nobody sees the list while another screen is on top: stop polling.
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def on_screen_resume(self) -> None:
        if self.is_mounted and self.fetches:
            self._fetch()

    def on_reconnected(self, event: Reconnected) -> None:
        """Connected again in place (ctrl+l): read the list again if it is on screen (a
        list under another screen reads it when it comes back)."""
        if self.app.screen is self:
            self._fetch()

    def on_needs_you_changed(self, event: NeedsYouChanged) -> None:
        """The watcher's news (or the countdown's second): mark the rows again."""
        if self.fetches:
            self._fill()

    # ------------------------------------------------------------ polling

    @work(exclusive=True, group="runs-refresh", exit_on_error=False)
    async def _fetch(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.runs = await shell(self).client.runs()
        self.fetches += 1
        self._fill()
        self.post_message(self.Refreshed(len(self.runs)))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        finished = (WorkerState.SUCCESS, WorkerState.ERROR)
        if event.worker.group != "runs-refresh" or event.state not in finished:
            return
        if event.state == WorkerState.ERROR:
            self._failures += 1
            self._caption_text = f"Could not refresh: {safe(str(event.worker.error))} — retrying"
            self.query_one("#runs-caption", Static).update(Text(self._caption_text))
            if self._failures == 1:
                forward_failure(self, event)  # the app's sink once; no toast per poll
        else:
            self._failures = 0
        if self.app.screen is self:
            # Arm the next poll only now that this one finished: requests never overlap.
            self._timer = self.set_timer(poll_interval(self), self._fetch)

    # ------------------------------------------------------------ table

    def _fill(self) -> None:
        badge = str(self.get_component_rich_style("runs--badge", partial=True))
        failed = str(self.get_component_rich_style("runs--failed", partial=True))
        shown = [r for r in self.runs if matches(r, self.state_filter)]
        # Runs that need a person first, then active ones, newest first.
        shown.sort(
            key=lambda r: (
                not r.pending_proposal_ids,
                str(r.state) in TERMINAL,
                -r.updated_at.timestamp(),
            )
        )
        needs_you: NeedsYou | None = getattr(self.app, "needs_you", None)
        now = shell(self).session.clock()
        width = self.app.size.width
        compact = width < runs_table.COMPACT_BELOW
        full = [
            self.with_mark(
                r.run_id,
                row_of(r, badge, failed, marks_of(needs_you, r.run_id, now), compact=compact),
            )
            for r in shown
        ]
        columns = runs_table.plan(
            width, {key: [row[i].plain for row in full] for i, key in enumerate(COLUMNS)}
        )
        rows = [fit(row, columns) for row in full]
        plain = tuple(tuple(cell.plain for cell in row) for row in rows)
        self._caption()
        table = self.query_one(DataTable)
        if columns != self._columns:
            # Another width (or a longer state): the columns are laid out again.
            self._columns = columns
            self._rows = ()
            selected = self.selected_run_id()
            table.clear(columns=True)
            for key, cells in columns.widths:
                table.add_column(key, width=cells, key=key)
            self._add_rows(shown, rows, selected)
            self._rows = plain
            return
        if plain == self._rows:
            return  # nothing changed: no repaint
        if [row[0] for row in plain] == [row[0] for row in self._rows]:
            # The same runs in the same order (a countdown ticked): only the cells that
            # changed are written, the cursor and the scroll stay.
            for run, row, before, after in zip(shown, rows, self._rows, plain, strict=True):
                for column, cell, old, new in zip(columns.keys, row, before, after, strict=True):
                    if old != new:
                        table.update_cell(run.run_id, column, cell)
            self._rows = plain
            return
        self._rows = plain
        selected = self.selected_run_id()
        table.clear()
        self._add_rows(shown, rows, selected)

    def _add_rows(
        self, shown: list[RunSummary], rows: list[tuple[Text, ...]], selected: str | None
    ) -> None:
        table = self.query_one(DataTable)
        for run, row in zip(shown, rows, strict=True):
            table.add_row(*row, key=run.run_id)
        if selected is not None and selected in {r.run_id for r in shown}:
            table.move_cursor(row=table.get_row_index(selected))

    def on_resize(self) -> None:
        if self.fetches:
            self._fill()

    def _caption(self) -> None:
        shown = sum(1 for r in self.runs if matches(r, self.state_filter))
        waiting = sum(1 for r in self.runs if r.pending_proposal_ids)
        text = f"filter: {self.state_filter or 'all'} (s) · {shown} of {len(self.runs)} runs"
        if waiting:
            text += f" · {waiting} waiting for approval"
        text += self.marks_caption()
        if self.fetches and not self.runs:
            text = "No runs on this backend yet: ctrl+o opens the bookings to start one."
        if text != self._caption_text:  # an unchanged caption is not repainted
            self._caption_text = text
            self.query_one("#runs-caption", Static).update(Text(text))

    def selected_run_id(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return None if key.value is None else str(key.value)

    def shown_run_ids(self) -> set[str]:
        """Ids of the runs the table shows now."""
        table = self.query_one(DataTable)
        return {str(key.value) for key in table.rows}

    def selected_run(self) -> RunSummary | None:
        run_id = self.selected_run_id()
        return next((r for r in self.runs if r.run_id == run_id), None)

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        run = self.selected_run() if self.is_mounted else None
        if action in ("open", "review", "cancel_run", "new_run") and run is None:
            return False
        if action == "new_run":
            # For a run that has ended, where Cancel run was (the run screen's `n` too).
            return bool(run and str(run.state) in TERMINAL) and not shell(self).session.read_only
        if action == "review":
            return bool(run and run.pending_proposal_ids)
        if action == "cancel_run":
            return bool(run and str(run.state) not in TERMINAL) and not (
                shell(self).session.read_only
            )
        if action == "back":
            return len(self.app.screen_stack) > 1  # opened over the picker (ctrl+r)
        if (allowed := self.marks_allow(action)) is not None:
            return allowed
        return True

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self.refresh_bindings()

    def action_open(self) -> None:
        run_id = self.selected_run_id()
        if run_id is not None:
            self.app.push_screen(PipelineScreen(run_id))

    def action_review(self) -> None:
        run_id = self.selected_run_id()
        if run_id is not None:
            self.app.push_screen(PipelineScreen(run_id, review_on_open=True))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_decisions(self) -> None:
        cast("Navigator", self.app).show_decisions()

    def action_cycle_filter(self) -> None:
        i = STATE_FILTERS.index(self.state_filter)
        self.state_filter = STATE_FILTERS[(i + 1) % len(STATE_FILTERS)]
        self._fill()

    def action_refresh(self) -> None:
        self._fetch()

    def action_new_run(self) -> None:
        from ito_tui.tui.new_run import new_run_from

        run = self.selected_run()
        if run is not None and self.check_action("new_run", ()):
            new_run_from(self, run.run_id, None)  # the list's rows carry no spec: read it

    def action_cancel_run(self) -> None:
        run = self.selected_run()
        if run is None or not self.check_action("cancel_run", ()):
            return
        self.app.push_screen(CancelRunModal(run.run_id, run.spend), callback=self._cancelled)

    def _cancelled(self, result: object) -> None:
        if result is not None:
            self._fetch()
