"""LossWindow: a proposal's loss chart as it was when the proposal was asked.

The run screen's modal draws the run's live loss; a proposal opened from the Decisions
screen or the palette has no live run behind it, so its modal fetches the run's
telemetry once and hands it here. Only samples up to the proposal's `created_at` are
kept, so the chart shows the window the operator was asked about, not what came after.
The samples go into a `state.RunTracker` of their own (the one owner of telemetry and
its views); the chart is given the `ChartView` it computes, at the chart's width.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ito_tui.contract import TelemetrySample
from ito_tui.state import RunTracker

from .sparkline import TextSparkline

WINDOW_S = 900.0
"""The same 15 minutes the run screen's modal shows, ending at the ask."""


class LossWindow(Vertical):
    """The loss over the `WINDOW_S` before `until`, once `show` has been given samples."""

    DEFAULT_CSS = """
    LossWindow { height: auto; }
    LossWindow TextSparkline { height: 2; }
    LossWindow #loss-note { color: $text-muted; }
    """

    def __init__(self, until: datetime, *, run_id: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.until = until
        self.tracker = RunTracker(run_id)
        """The window's samples (a tracker of their own: no live run feeds this one)."""
        self.samples = 0
        """How many samples of the window's run, up to `until`, the chart holds."""
        self._width = 0

    def compose(self) -> ComposeResult:
        yield TextSparkline()
        yield Static("Loading the loss window…", id="loss-note", markup=False)

    def show(self, samples: Iterable[TelemetrySample]) -> None:
        """Draw the samples taken up to the ask (later ones are what the decision led to)."""
        kept = [s for s in samples if s.ts <= self.until]
        self.tracker.backfill(kept, fresh=True)
        self.samples = len(kept)
        self._note("" if kept else "No loss was recorded before this proposal was asked.")
        self._draw()

    def on_text_sparkline_resized(self, event: TextSparkline.Resized) -> None:
        event.stop()
        self._width = event.width
        self._draw()

    def _draw(self) -> None:
        chart = self.query_one(TextSparkline)
        width = self._width or chart.chart_width()
        view = self.tracker.chart("loss", width, WINDOW_S)
        chart.view = replace(view, sublabel="15m before")

    def fail(self, reason: str) -> None:
        """Say why there is no chart; `reason` is already safe to show."""
        self._note(f"Loss window not available: {reason}")

    def _note(self, text: str) -> None:
        note = self.query_one("#loss-note", Static)
        note.update(Text(text))
        note.display = bool(text)
