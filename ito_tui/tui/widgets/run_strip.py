"""The run strip under the header: run state and stage, booking, progress, spend vs budget.

Step, ETA and spend are the tracker's `Progress` (`state.views.progress`), the one
source the stage list, the detail pane and the cancel modal draw too.
"""

from __future__ import annotations

from decimal import Decimal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from ito_tui.format import MISSING, progress_text, stage_label, status_label
from ito_tui.state import RunState
from ito_tui.state.views import Progress
from ito_tui.textsafe import safe

from .spend_bar import SpendBar


def status_text(s: RunState) -> Text:
    """`running · pretrain`, or `ENDED: gate_failed · mid-train` once over."""
    stage = stage_label(s.current_stage) if s.current_stage else MISSING
    head = f"ENDED: {s.outcome}" if s.terminal else status_label(s.state)
    return Text(f"{head} · {stage}")


def booking_text(s: RunState) -> Text:
    """`booking bk_h100_4n_ib` (its own box: a long status is cut, the booking never)."""
    return Text(f"booking {safe(s.booking_id or MISSING)}")


def progress_line(p: Progress | None) -> str:
    """`step 23,484/30,632 · ETA 3h52m` of the current stage; empty before a step."""
    if p is None or p.step is None:
        return ""
    return progress_text(p)


class RunStrip(Horizontal):
    """One line: what the run is doing, how far, and its spend bar with the 80%/95% marks."""

    DEFAULT_CSS = """
    RunStrip { height: 1; padding: 0 1; }
    RunStrip > #run-status {
        width: auto; max-width: 40%; text-style: bold; margin-right: 2;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    RunStrip > #run-booking { width: auto; margin-right: 2; }
    RunStrip > #run-progress { width: auto; margin-right: 2; }
    RunStrip > SpendBar { width: 1fr; min-width: 24; }
    """
    SPEND_ROOM = 32
    """Cells the spend bar keeps (`██░│ $691.39/$30,000.00 2%`): where the step and ETA
    would leave it less, they go (the stage list under the strip shows them too)."""

    run: reactive[RunState | None] = reactive(None, always_update=True, repaint=False)
    """The run (its state, stage, booking and outcome)."""
    progress: reactive[Progress | None] = reactive(None, repaint=False)
    """The run's step, ETA and spend (`RunTracker.progress()`)."""

    def compose(self) -> ComposeResult:
        # Kept: the strip is assigned at every repaint of the run.
        self._status_box = Static(id="run-status", markup=False)
        self._booking_box = Static(id="run-booking", markup=False)
        self._progress_box = Static(id="run-progress", markup=False)
        self._spend = SpendBar(id="spend")
        yield self._status_box
        yield self._booking_box
        yield self._progress_box
        yield self._spend

    _status = ""
    _booking = ""
    _progress = ""

    def watch_run(self, s: RunState | None) -> None:
        if s is None or not self.is_mounted:
            return
        status = status_text(s)
        if status.plain != self._status:
            # Assigned on every event; an update lays out the whole screen, so only on change.
            self._status = status.plain
            self._status_box.update(status)
            self._fit()
        booking = booking_text(s)
        if booking.plain != self._booking:
            self._booking = booking.plain
            self._booking_box.update(booking)
            self._fit()

    def watch_progress(self, p: Progress | None) -> None:
        if not self.is_mounted:
            return
        line = progress_line(p)
        if line != self._progress:
            # A layout lays out and repaints the whole screen (bench #4, #5): this box is
            # as wide as its text, so only a text of another length needs one.
            relayout = len(line) != len(self._progress)
            self._progress = line
            self._progress_box.update(Text(line), layout=relayout)
            self._fit()
        if p is not None and p.budget_usd is not None:
            spend = self._spend
            spend.budget = p.budget_usd
            spend.spent = p.usd_spent if p.usd_spent is not None else Decimal(0)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Show the step and ETA only where the booking and the spend keep their room."""
        width = self.content_region.width
        if not width:
            return
        # Each box is its text plus a margin of 2 (DEFAULT_CSS).
        used = sum(len(t) + 2 for t in (self._status, self._booking, self._progress))
        shown = bool(self._progress) and used + self.SPEND_ROOM <= width
        progress = self._progress_box
        if progress.display != shown:
            progress.display = shown
