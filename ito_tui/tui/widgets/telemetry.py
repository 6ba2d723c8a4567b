"""The telemetry panel: one labelled sparkline per charted metric, drawing given views.

The panel says what it shows (`wanted()`: each chart's metric and width, for the window
`window_s`), the run screen computes those views in `state/` (`RunTracker.chart`) and
hands them back (`show`). When the window, the stage or a chart's width changes, the
panel posts `Changed` and the screen computes the views again; nothing here reads the run.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from ito_tui.state.metrics import METRICS
from ito_tui.state.views import ChartView, MarkerKind

from .chart_text import MARKER_GLYPHS, MARKER_PRIORITY, MARKER_WORDS, drawn_kinds
from .sparkline import TextSparkline

WINDOWS: tuple[tuple[str, float | None], ...] = (("15 min", 900.0), ("6 h", 21600.0), ("run", None))
"""Time windows the window key cycles through (label, seconds or None for the whole run)."""

RL_STAGES = frozenset({"rlvr"})
"""Stages that show the async-RL metrics."""


class TelemetryPanel(VerticalScroll):
    """Sparklines for the metrics of the current stage; RLVR adds the async-RL metrics.

    The charts are two rows high; a stylesheet sets another height with a more specific
    rule (e.g. `#telemetry > TextSparkline { height: 4; }`) and they draw that many rows.
    """

    DEFAULT_CSS = """
    TelemetryPanel { height: 1fr; }
    TelemetryPanel > #telemetry-caption { height: 1; width: 1fr; color: $text-muted; padding: 0 1; }
    TelemetryPanel > TextSparkline { height: 2; padding: 0 1; }
    TelemetryPanel > TextSparkline.-rl { display: none; }
    TelemetryPanel.-rl > TextSparkline.-rl { display: block; }
    """

    window_index: reactive[int] = reactive(0, repaint=False)
    """Index into `WINDOWS` (the charts and the caption repaint themselves, not the panel)."""
    stage: reactive[str | None] = reactive(None, repaint=False)
    """The current stage (RLVR shows the RL metrics)."""

    class Changed(Message):
        """The window, the stage or a chart's width changed: compute the views again."""

        def __init__(self, panel: TelemetryPanel) -> None:
            super().__init__()
            self.panel = panel

        @property
        def control(self) -> TelemetryPanel:
            return self.panel

        def can_replace(self, message: Message) -> bool:
            # Nine charts resized at once are one recomputation.
            return isinstance(message, TelemetryPanel.Changed) and message.panel is self.panel

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._caption_text = ""
        self._caption_line = Static(id="telemetry-caption", markup=False)
        self._rewinds = 0
        self._kinds: frozenset[MarkerKind] = frozenset()
        # Kept: a redraw per telemetry event walks them (a DOM query each time cost ~0.1 ms).
        self._charts = {
            metric.key: TextSparkline(id=f"spark-{metric.key}", classes="-rl" if metric.rl else "")
            for metric in METRICS
            if metric.chart
        }

    @property
    def window_s(self) -> float | None:
        """The window's length in seconds (None: the whole run)."""
        return WINDOWS[self.window_index][1]

    @property
    def window_label(self) -> str:
        return WINDOWS[self.window_index][0]

    def compose(self) -> ComposeResult:
        yield self._caption_line
        yield from self._charts.values()

    def on_mount(self) -> None:
        self._caption()

    def wanted(self) -> list[tuple[str, int]]:
        """(metric key, chart width) of each chart on display, in panel order (none before
        the panel is laid out: it posts `Changed` once it is)."""
        return [
            (key, chart.chart_width())
            for key, chart in self._charts.items()
            if chart.display and chart.size.width
        ]

    def show(self, views: Mapping[str, ChartView], *, rewinds: int) -> None:
        """Draw these views (by metric key; charts without one keep theirs) and the
        run's rewind count in the caption."""
        for key, view in views.items():
            chart = self._charts.get(key)
            if chart is not None:
                chart.view = view
        kinds = frozenset().union(*(drawn_kinds(view) for view in views.values()))
        if views and (kinds != self._kinds or rewinds != self._rewinds):
            self._kinds, self._rewinds = kinds, rewinds
            self._caption()

    def cycle_window(self) -> None:
        self.window_index = (self.window_index + 1) % len(WINDOWS)

    def watch_window_index(self) -> None:
        self._caption()
        self.post_message(self.Changed(self))

    def watch_stage(self, stage: str | None) -> None:
        self.set_class(stage in RL_STAGES, "-rl")
        self.post_message(self.Changed(self))

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.Changed(self))

    def on_text_sparkline_resized(self, event: TextSparkline.Resized) -> None:
        event.stop()
        self.post_message(self.Changed(self))

    def _caption(self) -> None:
        parts = [f"window: {self.window_label} (w cycles)"]
        n = self._rewinds
        if n:
            parts.append(f"{MARKER_GLYPHS['rewind']} {n} rewind{'s' if n != 1 else ''}")
        # A legend of the marks on the charts: the glyphs say which is which, not colour.
        parts.extend(
            f"{MARKER_GLYPHS[kind]} {MARKER_WORDS[kind]}"
            for kind in MARKER_PRIORITY
            if kind in self._kinds and kind != "rewind"
        )
        text = " · ".join(parts)
        if text != self._caption_text:
            # The caption's box is one row of fixed width (CSS): new text never needs a
            # layout, which would reflow the whole screen on every `w` and chart flush.
            self._caption_text = text
            self._caption_line.update(text, layout=False)
