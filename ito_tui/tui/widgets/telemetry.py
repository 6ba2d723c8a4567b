"""The telemetry panel: one labelled chart per charted metric, drawing given views.

Its charts are the fixed metrics of the current stage, then the open metrics the operator
added from the metric picker (`toggle_extra`, each under its own name).

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

from .chart_stack import ChartStack
from .chart_text import MARKER_GLYPHS, MARKER_PRIORITY, MARKER_WORDS, drawn_kinds

WINDOWS: tuple[tuple[str, float | None], ...] = (("15 min", 900.0), ("6 h", 21600.0), ("run", None))
"""Time windows the window key cycles through (label, seconds or None for the whole run)."""

RL_STAGES = frozenset({"rlvr"})
"""Stages that show the async-RL metrics."""


class TelemetryPanel(VerticalScroll):
    """Charts of the metrics of the current stage; RLVR adds the async-RL metrics.

    The charts (one `ChartStack`) are two rows high; a stylesheet sets another height
    with a more specific rule (e.g. `#telemetry ChartStack > .chart-stack--chart {
    height: 4; }`) and they draw that many rows.
    """

    DEFAULT_CSS = """
    TelemetryPanel { height: 1fr; }
    TelemetryPanel > #telemetry-caption { height: 1; width: 1fr; color: $text-muted; padding: 0 1; }
    TelemetryPanel > ChartStack { padding: 0 1; }
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
        self._plain = tuple(m.key for m in METRICS if m.chart and not m.rl)
        self._with_rl = tuple(m.key for m in METRICS if m.chart)
        self._extras: tuple[str, ...] = ()
        self._legend: str | None = None
        self._charts = ChartStack(self._plain, id="telemetry-charts")

    @property
    def window_s(self) -> float | None:
        """The window's length in seconds (None: the whole run)."""
        return WINDOWS[self.window_index][1]

    @property
    def window_label(self) -> str:
        return WINDOWS[self.window_index][0]

    def compose(self) -> ComposeResult:
        yield self._caption_line
        yield self._charts

    def on_mount(self) -> None:
        self._caption()

    @property
    def extras(self) -> tuple[str, ...]:
        """The open metrics charted besides the fixed ones (`toggle_extra`), in order added."""
        return self._extras

    def toggle_extra(self, name: str) -> bool:
        """Chart open metric `name` under the fixed charts, or stop charting it; True when
        it is charted now. Kept for the panel's life (the run screen's)."""
        added = name not in self._extras
        self._extras = (
            (*self._extras, name) if added else tuple(n for n in self._extras if n != name)
        )
        self._charts.keys = self._keys()
        self.post_message(self.Changed(self))
        if added:
            # The new chart is the last one: bring it into view (the panel scrolls at 80x24).
            self.call_after_refresh(self.scroll_end, animate=False)
        return added

    def _keys(self) -> tuple[str, ...]:
        fixed = self._with_rl if self.stage in RL_STAGES else self._plain
        # An open metric named like a shown fixed chart is that chart (`RunTracker.chart`).
        return fixed + tuple(name for name in self._extras if name not in fixed)

    def wanted(self) -> list[tuple[str, int]]:
        """(metric key, chart width) of each chart on display, in panel order (none before
        the panel is laid out: it posts `Changed` once it is)."""
        charts = self._charts
        if not charts.size.width:
            return []
        width = charts.chart_width()
        return [(key, width) for key in charts.keys]

    def show(self, views: Mapping[str, ChartView], *, rewinds: int) -> None:
        """Draw these views (by metric key; charts without one keep theirs) and the
        run's rewind count in the caption."""
        self._charts.show(views)
        kinds = frozenset().union(*(drawn_kinds(view) for view in views.values()))
        if views and (kinds != self._kinds or rewinds != self._rewinds):
            self._kinds, self._rewinds = kinds, rewinds
            self._caption()

    def set_legend(self, legend: str | None) -> None:
        """The reference run's legend in the caption (None: no reference)."""
        if legend != self._legend:
            self._legend = legend
            self._caption()

    def cycle_window(self) -> None:
        self.window_index = (self.window_index + 1) % len(WINDOWS)

    def watch_window_index(self) -> None:
        self._caption()
        self.post_message(self.Changed(self))

    def watch_stage(self, stage: str | None) -> None:
        self.set_class(stage in RL_STAGES, "-rl")
        self._charts.keys = self._keys()
        self.post_message(self.Changed(self))

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.Changed(self))

    def on_chart_stack_resized(self, event: ChartStack.Resized) -> None:
        event.stop()
        self.post_message(self.Changed(self))

    def _caption(self) -> None:
        # The reference's legend first: a narrow pane cuts the end of the line.
        parts = [] if self._legend is None else [self._legend]
        parts.append(f"window: {self.window_label} (w cycles)")
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
