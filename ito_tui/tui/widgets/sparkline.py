"""A pre-bucketed, single-style text sparkline: per-column min/max range bars plus labels.

Textual's own Sparkline redraws over its whole data and writes a colour sequence per bar.
This one draws a `SeriesView` that `state.TelemetrySeries` already bucketed to the chart
width, so a frame costs O(width) whatever the history, and each chart row is one span
(`chart_text` draws the rows). Each column keeps its bucket's minimum and maximum, so a
dip or a spike inside a bucket stays visible. The marks of non-finite samples, and a
non-finite latest value, are drawn in the theme's error colour (`sparkline--nonfinite`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import groupby
from typing import Self

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ito_tui.format import NONFINITE_MARKS
from ito_tui.textsafe import one_line

from .chart_text import LOWER as LOWER
from .chart_text import MARKER as MARKER
from .chart_text import NAN_GLYPH as NAN_GLYPH
from .chart_text import NEG_INF_GLYPH as NEG_INF_GLYPH
from .chart_text import NONFINITE_GLYPHS as NONFINITE_GLYPHS
from .chart_text import POS_INF_GLYPH as POS_INF_GLYPH
from .chart_text import SHADE as SHADE
from .chart_text import ChartData as ChartData
from .chart_text import Formatter as Formatter
from .chart_text import chart_rows as chart_rows
from .chart_text import default_format as default_format
from .chart_text import value_span as value_span


def _changed_span(old: str, new: str) -> tuple[int, int]:
    """(start, length) from the first to the last cell where two different rows of the
    same length differ.

    One region per row, not one per run of changes: Textual writes each dirty region of
    a row from the left edge of the widget's part of that row to the region's end, so
    two regions on a row write its start twice (bench #5: ~40 % of the bytes).
    """
    first = next(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
    last = next(i for i in range(len(new) - 1, first - 1, -1) if old[i] != new[i])
    return first, last + 1 - first


class TextSparkline(Widget):
    """A labelled sparkline. It pulls a `ChartData` for its own width when it renders.

    `source(width)` is only called while the widget is on screen; bump `version` to redraw.
    """

    DEFAULT_CSS = """
    TextSparkline { height: 2; width: 1fr; }
    TextSparkline > .sparkline--chart { color: $accent; }
    TextSparkline > .sparkline--label { color: $text-muted; }
    TextSparkline > .sparkline--value { text-style: bold; }
    TextSparkline > .sparkline--nonfinite { color: $error; text-style: bold; }
    """
    COMPONENT_CLASSES = {
        "sparkline--chart",
        "sparkline--label",
        "sparkline--value",
        "sparkline--nonfinite",
    }

    LABEL_WIDTH = 11
    STATS_WIDTH = 15

    version: reactive[int] = reactive(0)
    """Bump to redraw (the widget re-reads its source)."""

    def __init__(
        self,
        label: str,
        source: Callable[[int], ChartData],
        *,
        sublabel: str = "",
        fmt: Formatter = default_format,
        compact: Formatter | None = None,
        floor: float | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.label = label
        self.sublabel = sublabel
        self.source = source
        self.fmt = fmt
        self.compact = compact
        """A shorter form of `fmt` for a figure that does not fit the stats column."""
        self.floor = floor
        self._drawn: tuple[Size, list[str]] | None = None
        """The size and the rows on screen (or about to be, once the repaint runs)."""
        self._stale = True
        """A repaint was asked for without new rows: read the source again to draw."""
        self._styles: tuple[tuple[Style, str], tuple[Style, Style, Style, Style]] | None = None
        """The widget's style and the label, chart, value and non-finite styles over it."""

    # The size is passed down rather than read again: each `Widget.size` walks Textual's
    # layout (~3 us), and a chart read it nine times per telemetry event.

    def _stats_width(self, size: Size) -> int:
        return self.STATS_WIDTH if size.width >= 60 else self.STATS_WIDTH - 3

    def chart_width(self, size: Size | None = None) -> int:
        size = self.size if size is None else size
        return max(4, size.width - self.LABEL_WIDTH - self._stats_width(size) - 1)

    def refresh_if_changed(self) -> None:
        """Repaint only the cells that would draw something else than they last drew.

        A repaint rewrites the cells it covers to the terminal, so an event that leaves
        this metric's columns, value and labels as they were costs nothing, and rows
        whose text did not change are not rewritten. (Textual writes a dirty region of
        a row from the widget's left edge to the region's end, so a changed value still
        rewrites its row: the saving is in the rows and the cells after the last change,
        and a row's changes are one region.)
        """
        size = self.size
        rows = self._rows(self.source(self.chart_width(size)), size)
        regions = self._changed(rows, size)
        if regions is None:
            self.refresh()
        elif regions:
            self.refresh(*regions)
        else:
            return
        # The repaint draws these rows: no need to read the source again for it.
        self._drawn = (size, rows)
        self._stale = False

    def _changed(self, rows: list[str], size: Size) -> list[Region] | None:
        """The regions where `rows` differ from what is drawn; None for the whole widget."""
        drawn = self._drawn
        if drawn is None or self._stale or drawn[0] != size or len(drawn[1]) != len(rows):
            return None
        regions: list[Region] = []
        for y, (old, new) in enumerate(zip(drawn[1], rows, strict=True)):
            if old == new:
                continue
            if len(old) != len(new) or cell_len(new) != len(new) or cell_len(old) != len(old):
                return None  # a wide character: characters are not cells, redraw it all
            x, width = _changed_span(old, new)
            regions.append(Region(x, y, width, 1))
        return regions

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        self._stale = True
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _rows(self, data: ChartData, size: Size) -> list[str]:
        """The widget's text, one string per row (each row's styles are fixed by position)."""
        rows = max(1, size.height)
        stats_width = self._stats_width(size)
        chart = chart_rows(data, rows, self.floor)
        value = data.note if data.note is not None else self._figure(data.value, stats_width)
        span = self._span(data.vmin, data.vmax, stats_width) if data.vmax is not None else ""
        labels = [self.label, self.sublabel]
        stats = [value, span] if rows > 1 else [f"{value} {span}".strip()]
        out = []
        for r in range(rows):
            label = labels[r] if r < len(labels) else ""
            text = stats[r] if r < len(stats) else ""
            out.append(
                f"{label[: self.LABEL_WIDTH - 1]:<{self.LABEL_WIDTH}}"
                # Cut with "…": a cut figure must look cut (`$5,000–$8,50` read as whole).
                f"{chart[r]} {one_line(text, stats_width):<{stats_width}}"
            )
        return out

    def _figure(self, value: float | None, width: int) -> str:
        text = self.fmt(value)
        return self.compact(value) if len(text) > width and self.compact else text

    def _span(self, low: float | None, high: float | None, width: int) -> str:
        span = value_span(self.fmt(low), self.fmt(high))
        if len(span) > width and self.compact:
            span = value_span(self.compact(low), self.compact(high))
        return span

    def render_line(self, y: int) -> Strip:
        """Row `y`: a label, a chart and a value span (Textual's line API).

        Going through `render()` ran the whole widget's text through Textual's content
        pipeline on every repaint, however few cells changed; this draws the rows
        `refresh_if_changed` already computed, or reads the source once per repaint.
        """
        size = self.size
        if self._stale or self._drawn is None or self._drawn[0] != size:
            self._drawn = (size, self._rows(self.source(self.chart_width(size)), size))
            self._stale = False
        rows = self._drawn[1]
        base = self.rich_style
        if y >= len(rows):
            return Strip.blank(size.width, base)
        label, chart, value, odd = self._span_styles(base)
        row = rows[y]
        chart_end = self.LABEL_WIDTH + self.chart_width(size)
        cells = row[self.LABEL_WIDTH : chart_end]
        stats = row[chart_end:]
        if y == 0 and any(mark in stats for mark in NONFINITE_MARKS):
            value = odd  # `NaN`, `∞`, `$NaN`: the span beside it is finite by construction
        return Strip(
            [
                Segment(row[: self.LABEL_WIDTH], label),
                *(
                    (Segment(cells, chart),)
                    if NONFINITE_GLYPHS.isdisjoint(cells)
                    else _chart_segments(cells, chart, odd)
                ),
                Segment(stats, value if y == 0 else label),
            ],
            len(row),
        )

    def _span_styles(self, base: Style) -> tuple[Style, Style, Style, Style]:
        """Label, chart, value and non-finite styles over `base` (cached while base and
        theme hold)."""
        key = (base, self.app.theme)
        if self._styles is None or self._styles[0] != key:
            names = ("label", "chart", "value", "nonfinite")
            label, chart, value, odd = (
                base + self.get_component_rich_style(f"sparkline--{name}", partial=True)
                for name in names
            )
            self._styles = (key, (label, chart, value, odd))
        return self._styles[1]


def _chart_segments(cells: str, chart: Style, odd: Style) -> Iterator[Segment]:
    """The chart cells as runs of the chart style and runs of non-finite marks."""
    for is_odd, run in groupby(cells, NONFINITE_GLYPHS.__contains__):
        yield Segment("".join(run), odd if is_odd else chart)
