"""LossWindow: a proposal's loss chart as it was when the proposal was asked.

The pipeline's modal draws the run's live loss; a proposal opened from the Decisions
screen or the palette has no live run behind it, so its modal fetches the run's
telemetry once and hands it here. Only samples up to the proposal's `created_at` are
kept, so the chart shows the window the operator was asked about, not what came after.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ito_tui.contract import TelemetrySample
from ito_tui.state import TelemetryBank

from .sparkline import ChartData, TextSparkline
from .telemetry import TelemetryCharts

WINDOW_S = 900.0
"""The same 15 minutes the pipeline's modal shows, ending at the ask."""


class LossWindow(Vertical):
    """The loss over the `WINDOW_S` before `until`, once `show` has been given samples."""

    DEFAULT_CSS = """
    LossWindow { height: auto; }
    LossWindow TextSparkline { height: 2; }
    LossWindow #loss-note { color: $text-muted; }
    """

    def __init__(self, until: datetime, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.until = until
        self.charts = TelemetryCharts(TelemetryBank())
        self.samples = 0
        """How many samples of the window's run, up to `until`, the chart holds."""

    def compose(self) -> ComposeResult:
        yield TextSparkline("loss", self._chart, sublabel="15m before")
        yield Static("Loading the loss window…", id="loss-note", markup=False)

    def _chart(self, width: int) -> ChartData:
        return self.charts.chart("loss", width, WINDOW_S)

    def show(self, samples: Iterable[TelemetrySample]) -> None:
        """Draw the samples taken up to the ask (later ones are what the decision led to)."""
        kept = [s for s in samples if s.ts <= self.until]
        self.charts.ingest_backfill(kept)
        self.samples = len(kept)
        self._note("" if kept else "No loss was recorded before this proposal was asked.")
        self.query_one(TextSparkline).version += 1

    def fail(self, reason: str) -> None:
        """Say why there is no chart; `reason` is already safe to show."""
        self._note(f"Loss window not available: {reason}")

    def _note(self, text: str) -> None:
        note = self.query_one("#loss-note", Static)
        note.update(Text(text))
        note.display = bool(text)
