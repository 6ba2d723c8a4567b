"""A pre-bucketed, single-style text sparkline: per-column min/max range bars plus labels.

Textual's own Sparkline redraws over its whole data and writes a colour sequence per bar.
This one draws a `SeriesView` that `state.TelemetrySeries` already bucketed to the chart
width, so a frame costs O(width) whatever the history, and each chart row is one span.
Each column keeps its bucket's minimum and maximum, so a dip or a spike inside a bucket
stays visible.

Non-finite samples are data (a diverged loss): a column that holds one is marked in the
theme's error colour — `×` (NaN) and `↑` (+Infinity) on the top row, `↓` (−Infinity) on
the bottom row — and the scale comes from the finite samples only. A huge *finite* value
(1e308) is finite: it is drawn at its true height, so the others sit at the bottom and the
min–max label says why (a log scale would misdraw every ordinary chart); a span too wide
for a float (−1e308 to 1e308) is halved before scaling, never a crash.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import groupby
from typing import Self

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ito_tui.format import NONFINITE_MARKS, special
from ito_tui.state import NAN_BIT, NEG_INF_BIT, POS_INF_BIT
from ito_tui.textsafe import one_line

LOWER = " ▁▂▃▄▅▆▇█"
MARKER = "↶"
SHADE = "▒"
NAN_GLYPH = "×"
POS_INF_GLYPH = "↑"
NEG_INF_GLYPH = "↓"
NONFINITE_GLYPHS = frozenset({NAN_GLYPH, POS_INF_GLYPH, NEG_INF_GLYPH})
"""Glyphs of non-finite samples (never drawn otherwise: the renderer colours them)."""


@dataclass(frozen=True)
class ChartData:
    """One chart's worth of already-bucketed data (one entry per column)."""

    lows: Sequence[float | None]
    highs: Sequence[float | None]
    value: float | None = None
    """The latest value."""
    vmin: float | None = None
    """Minimum over the shown window."""
    vmax: float | None = None
    """Maximum over the shown window."""
    markers: Sequence[int] = field(default_factory=tuple)
    """Column indices to mark (e.g. where a rollback rewound the step counter)."""
    note: str | None = None
    """Shown instead of the value when the metric has no meaning (e.g. `n/a (fp8)`)."""
    odd: Sequence[int] = field(default_factory=tuple)
    """Per column, which non-finite kinds it holds (`state.NAN_BIT | POS_INF_BIT | …`);
    empty when none does."""


def _level(value: float, lo: float, hi: float, levels: int) -> float:
    if hi <= lo:
        # A flat series: mid-height, or the floor when it sits at zero.
        return 1 if value == 0 else levels / 2
    return (value - lo) / (hi - lo) * levels


def _filled(data: ChartData) -> tuple[list[float | None], list[float | None]]:
    """Columns with no sample between two that have one repeat the previous column.

    A sparse window (fewer samples than columns) would otherwise draw as a comb.
    """
    lows, highs = list(data.lows), list(data.highs)
    known = [i for i, v in enumerate(highs) if v is not None]
    if not known:
        return lows, highs
    odd = data.odd
    for i in range(known[0] + 1, known[-1]):
        # A column of only non-finite samples is not a hole: it shows its mark, no bar.
        if highs[i] is None and not (i < len(odd) and odd[i]):
            lows[i] = highs[i] = highs[i - 1]
    return lows, highs


def _bounded(level: float, levels: int) -> float:
    """`level` kept within a level of the scale's ends. A value far outside a tiny span
    (1e-320 wide) divides to infinity, which has no whole level; past the end of the
    scale, every level draws the same as the one beside the end."""
    return min(max(level, -1.0), levels + 1.0)


def chart_rows(data: ChartData, rows: int, floor: float | None = None) -> list[str]:
    """The chart as `rows` strings (top first), one character per column.

    An area chart: each column is filled from the bottom up to its bucket's maximum;
    cells that only the maximum reaches (above the bucket's minimum) are shaded, so a
    spike or a dip inside a bucket stays visible. `floor` pins the bottom of the scale
    (e.g. 0 for fractions); otherwise the window minimum is the bottom.
    """
    width = len(data.highs)
    lo = data.vmin if floor is None else min(floor, data.vmin if data.vmin is not None else floor)
    hi = data.vmax
    if lo is None or hi is None:  # no finite sample: nothing but the non-finite marks
        blank = [[" "] * width for _ in range(rows)]
        return _marked(blank, data) if any(data.odd) else ["".join(r) for r in blank]
    levels = rows * 8
    lows, highs = _filled(data)
    blank = (" ",) * rows
    columns: list[tuple[str, ...]] = []
    span = hi - lo
    if span == math.inf:  # -1e308 to 1e308: halved, every level is the same
        lo, hi = lo / 2, hi / 2
        lows = [None if v is None else v / 2 for v in lows]
        highs = [None if v is None else v / 2 for v in highs]
        span = hi - lo
    for top_v, bot_v in zip(highs, lows, strict=True):
        if top_v is None:
            columns.append(blank)
            continue
        if bot_v is None:
            bot_v = top_v
        if span > 0:  # `_level`, inline: this loop runs per column of every chart per event
            top_l, bot_l = (top_v - lo) / span * levels, (bot_v - lo) / span * levels
        else:
            top_l, bot_l = _level(top_v, lo, hi, levels), _level(bot_v, lo, hi, levels)
        try:
            top, solid = round(top_l), int(bot_l)
        except OverflowError:  # infinite: see `_bounded`
            top, solid = round(_bounded(top_l, levels)), int(_bounded(bot_l, levels))
        top = 1 if top < 1 else levels if top > levels else top
        columns.append(_column_cells(top, top if solid > top else solid, rows))
    grid = (
        [list(row) for row in zip(*columns, strict=True)] if columns else [[] for _ in range(rows)]
    )
    return _marked(grid, data)


def _marked(grid: list[list[str]], data: ChartData) -> list[str]:
    """`grid` with the non-finite marks and the markers drawn over it, as row strings."""
    width = len(grid[0]) if grid else 0
    for col, bits in enumerate(data.odd[:width]):
        if not bits:
            continue
        if bits & NEG_INF_BIT:
            grid[-1][col] = NEG_INF_GLYPH
        if bits & (NAN_BIT | POS_INF_BIT):
            grid[0][col] = NAN_GLYPH if bits & NAN_BIT else POS_INF_GLYPH
    for col in data.markers:
        if 0 <= col < width:
            grid[0][col] = MARKER
    return ["".join(r) for r in grid]


@lru_cache(maxsize=4096)
def _column_cells(top: int, solid: int, rows: int) -> tuple[str, ...]:
    """One column's cells, top row first: filled up to level `top` (of `rows * 8`), solid
    up to `solid`, shaded between the two when they are a cell or more apart."""
    cells = [" "] * rows
    for r in range(rows):
        cell_lo, cell_hi = r * 8, r * 8 + 8
        if top <= cell_lo:
            break
        if top < cell_hi:
            ch = LOWER[top - cell_lo]
        elif solid >= cell_hi or top - solid < 8:
            ch = "█"
        else:
            ch = SHADE
        cells[rows - 1 - r] = ch
    return tuple(cells)


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


Formatter = Callable[[float | None], str]


def default_format(value: float | None) -> str:
    """`3.14`, `8,412`, `12.4K`, `1.2e-03`; `NaN`, `∞`, `1e308` (`ito_tui.format`)."""
    if value is None:
        return "–"
    text = special(value)
    if text is not None:
        return text
    if abs(value) >= 10_000:
        for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
            if abs(value) >= div:
                return f"{value / div:.1f}{unit}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if value != 0 and abs(value) < 0.01:
        return f"{value:.1e}"
    return f"{value:.3g}"


def value_span(low: str, high: str) -> str:
    """`96.2–96.7%`, `75–76 GiB`: a unit both ends share is written once, after the
    range, so a narrow stats column keeps both numbers (it cut `75 GiB–76 GiB` to
    `75 GiB–76 Gi`)."""
    n = 0
    while n < min(len(low), len(high)) and low[-1 - n] == high[-1 - n]:
        if low[-1 - n].isdigit():
            break
        n += 1
    if n and low[:-n][-1:].isdigit() and high[:-n][-1:].isdigit():
        return f"{low[:-n]}–{high}"
    return f"{low}–{high}"


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
        if y == 0:
            value = odd if stats.lstrip().startswith(NONFINITE_MARKS) else value
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
