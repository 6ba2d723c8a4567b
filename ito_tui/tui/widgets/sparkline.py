"""A pre-bucketed, single-style text sparkline: per-column min/max range bars plus labels.

Textual's own Sparkline redraws over its whole data and writes a colour sequence per bar.
This one draws a `state.views.ChartView` that `state/` already bucketed to the chart
width, so a frame costs O(width) whatever the history, and each chart row is one span
(`chart_text` draws the rows). Each column keeps its bucket's minimum and maximum, so a
dip or a spike inside a bucket stays visible. The marks of non-finite samples, and a
non-finite latest value, are drawn in the theme's error colour (`sparkline--nonfinite`);
markers in `sparkline--marker`, a fault's in `sparkline--fault` (their glyphs differ too).

The widget draws what it is given (`view`) and nothing else: labels, unit and note come
resolved in the view. It draws as many rows as its height (CSS: `TextSparkline { height:
N }`), and posts `Resized` when its width in chart columns changes, so whoever computes
its view can compute one at the new width.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ito_tui.format import NONFINITE_MARKS, metric_compact, metric_value
from ito_tui.state.views import ChartView
from ito_tui.textsafe import one_line

from .chart_text import (
    FAULT_GLYPH,
    MARKER_SET,
    NONFINITE_GLYPHS,
    REF_GLYPH,
    REF_IN_GLYPH,
    chart_rows,
    span_text,
)
from .chart_text import NAN_GLYPH as NAN_GLYPH
from .chart_text import POS_INF_GLYPH as POS_INF_GLYPH

_SPECIAL = NONFINITE_GLYPHS | MARKER_SET | {REF_GLYPH, REF_IN_GLYPH}
"""Chart glyphs drawn in a style of their own."""

LABEL_WIDTH = 11
"""Cells of a chart's label column."""
STATS_WIDTH = 15
"""Cells of its value column (3 fewer below 60 cells)."""


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


def fitted(view: ChartView, width: int) -> ChartView:
    """`view` with exactly `width` columns: the newest ones kept, blanks before them.

    A view computed for the width before a resize is drawn this way until its
    replacement (at the new width) arrives.
    """
    n = view.width
    if n == width:
        return view
    odd = view.odd if len(view.odd) == n else (0,) * n
    shift = width - n
    pad: tuple[None, ...] = (None,) * max(0, shift)
    if shift < 0:
        lows, highs, odd = view.lows[-shift:], view.highs[-shift:], odd[-shift:]
    else:
        lows, highs, odd = pad + view.lows, pad + view.highs, (0,) * shift + odd
    markers = tuple(
        replace(m, column=m.column + shift) for m in view.markers if m.column + shift >= 0
    )
    refs = view.ref_lows, view.ref_highs
    if refs[0] and shift < 0:
        refs = refs[0][-shift:], refs[1][-shift:]
    elif refs[0]:
        refs = pad + refs[0], pad + refs[1]
    return replace(
        view, lows=lows, highs=highs, odd=odd, markers=markers, ref_lows=refs[0], ref_highs=refs[1]
    )


class TextSparkline(Widget):
    """A labelled sparkline drawing the `ChartView` it was given, at its own size."""

    DEFAULT_CSS = """
    TextSparkline { height: 2; width: 1fr; }
    TextSparkline > .sparkline--chart { color: $accent; }
    TextSparkline > .sparkline--label { color: $text-muted; }
    TextSparkline > .sparkline--value { text-style: bold; }
    TextSparkline > .sparkline--nonfinite { color: $error; text-style: bold; }
    TextSparkline > .sparkline--marker { color: $foreground; text-style: bold; }
    TextSparkline > .sparkline--fault { color: $error; text-style: bold; }
    TextSparkline > .sparkline--reference { color: $text-muted; }
    TextSparkline > .sparkline--reference-in { color: $accent; text-style: reverse; }
    """
    COMPONENT_CLASSES = {
        "sparkline--chart",
        "sparkline--label",
        "sparkline--value",
        "sparkline--nonfinite",
        "sparkline--marker",
        "sparkline--fault",
        "sparkline--reference",
        "sparkline--reference-in",
    }

    LABEL_WIDTH = LABEL_WIDTH
    STATS_WIDTH = STATS_WIDTH

    view: reactive[ChartView | None] = reactive(None, repaint=False)
    """What to draw (None: an empty chart). A new view repaints only the cells it changes."""

    class Resized(Message):
        """The chart's width in columns changed: its view should be computed again."""

        def __init__(self, chart: TextSparkline, width: int) -> None:
            super().__init__()
            self.chart = chart
            self.width = width

        @property
        def control(self) -> TextSparkline:
            return self.chart

    def __init__(
        self,
        view: ChartView | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(TextSparkline.view, view)
        self._drawn: tuple[ChartView | None, Size, list[str]] | None = None
        """The view, size and rows on screen (or about to be, once the repaint runs)."""
        self._width = 0
        """The chart width last announced by `Resized`."""
        self._styles = SpanStyles(self)

    # The size is passed down rather than read again: each `Widget.size` walks Textual's
    # layout (~3 us), and nine charts repaint per telemetry event.

    def chart_width(self, size: Size | None = None) -> int:
        """How many columns the chart draws at `size` (the widget's own by default)."""
        size = self.size if size is None else size
        return chart_width(size.width)

    def on_resize(self, event: events.Resize) -> None:
        width = self.chart_width(event.size)
        if width != self._width:
            self._width = width
            self.post_message(self.Resized(self, width))

    def watch_view(self, view: ChartView | None) -> None:
        """Repaint only the cells that draw something else than they last drew.

        A repaint rewrites the cells it covers to the terminal, so rows whose text did
        not change are not rewritten. (Textual writes a dirty region of a row from the
        widget's left edge to the region's end, so a changed value still rewrites its
        row: the saving is in the rows and the cells after the last change, and a row's
        changes are one region.)
        """
        if not self.is_mounted:
            return
        size = self.size
        old = self._drawn
        rows = self._rows(view, size)
        self._drawn = (view, size, rows)
        regions = None if old is None or old[1] != size else changed_regions(old[2], rows)
        if regions is None:
            self.refresh()
        elif regions:
            self.refresh(*regions)

    def _current(self, size: Size) -> list[str]:
        drawn = self._drawn
        view = self.view
        if drawn is None or drawn[0] is not view or drawn[1] != size:
            drawn = self._drawn = (view, size, self._rows(view, size))
        return drawn[2]

    def _rows(self, view: ChartView | None, size: Size) -> list[str]:
        """The widget's text, one string per row (each row's styles are fixed by position)."""
        return chart_lines(view, size.width, max(1, size.height))

    def render_line(self, y: int) -> Strip:
        """Row `y`: a label, a chart and a value span (Textual's line API)."""
        size = self.size
        rows = self._current(size)
        base = self.rich_style
        if y >= len(rows):
            return Strip.blank(size.width, base)
        return chart_strip(rows[y], y, chart_width(size.width), self._styles.over(base))


def stats_width(width: int) -> int:
    """The value column's width in a chart `width` cells wide."""
    return STATS_WIDTH if width >= 60 else STATS_WIDTH - 3


def chart_width(width: int) -> int:
    """How many columns a chart `width` cells wide draws."""
    return max(4, width - LABEL_WIDTH - stats_width(width) - 1)


def cells_key(view: ChartView, width: int, rows: int) -> tuple[object, ...]:
    """What a chart's cells (`chart_rows`) depend on: equal keys draw equal cells."""
    return (view.lows, view.highs, view.odd, view.markers, view.floor, view.vmin, view.vmax,
            view.ref_lows, view.ref_highs, width, rows)  # fmt: skip


def chart_lines(
    view: ChartView | None, width: int, rows: int, cells: list[str] | None = None
) -> list[str]:
    """A chart's text `width` cells wide: `rows` strings, each a label, the chart's
    columns and a value (each part's style is fixed by its position: `chart_strip`).
    `cells`: the chart's columns already drawn for an equal `cells_key`."""
    stats = stats_width(width)
    columns = chart_width(width)
    if view is None:
        chart, labels, texts = [" " * columns] * rows, ["", ""], ["", ""]
    else:
        chart = cells if cells is not None else chart_rows(fitted(view, columns), rows)
        value = view.note if view.note is not None else _figure(view, stats)
        if len(value) > stats and _draws_nothing(view):
            # A note longer than the value column (`not measured (fp8)`) on a chart that
            # draws nothing: written over its columns, whole, not cut to `not meas…`; on
            # a chart too narrow for it, its last words go to the value column.
            head, tail = _note_parts(value, columns, stats)
            chart = [one_line(head, columns).ljust(columns), *chart[1:]]
            value = tail
        span = span_text(view, stats) if view.vmax is not None else ""
        labels = _labels(view.label, view.sublabel, rows)
        texts = [value, span] if rows > 1 else [f"{value} {span}".strip()]
        if view.ref_label is not None and rows > 1:
            # The reference's value where this run is now: under ours (in place of the
            # span at two rows; the scale spans both runs then).
            ref = f"{REF_GLYPH} {_ref_figure(view, stats - 2)}"
            texts = [value, ref] if rows == 2 else [value, span, ref]
    out = []
    for r in range(rows):
        label = labels[r] if r < len(labels) else ""
        text = texts[r] if r < len(texts) else ""
        out.append(
            f"{one_line(label, LABEL_WIDTH - 1):<{LABEL_WIDTH}}"
            # Cut with "…": a cut figure must look cut (`$5,000–$8,50` read as whole).
            f"{chart[r]} {one_line(text, stats):<{stats}}"
        )
    return out


def _note_parts(note: str, columns: int, stats: int) -> tuple[str, str]:
    """`note` as (what the chart's columns show, what the value column shows): whole over
    the columns when it fits, else split between words so both parts fit."""
    cut = len(note)
    while len(note[:cut]) > columns or len(note[cut:].strip()) > stats:
        cut = note.rfind(" ", 0, cut)
        if cut <= 0:
            return note, ""  # no split fits: cut over the columns
    return note[:cut], note[cut:].strip()


def _draws_nothing(view: ChartView) -> bool:
    """Whether `view` has nothing for its columns: no finite sample, no mark, no marker,
    no reference (an fp8 run's MFU)."""
    return view.vmax is None and not any(view.odd) and not view.markers and view.ref_label is None


def _labels(label: str, sublabel: str, rows: int) -> list[str]:
    """The label column's two rows. A label too long for it with no sublabel (an open
    metric's name, `loss_metrics/global_avg_loss`) shows its start and its end, so two
    names that share a prefix stay apart (`loss_metr…` / `…_avg_loss`)."""
    room = LABEL_WIDTH - 1
    if sublabel or rows < 2 or len(label) <= room:
        return [label, sublabel]
    return [label[: room - 1] + "…", "…" + label[-(room - 1) :]]


def chart_strip(row: str, y: int, columns: int, styles: tuple[Style, ...]) -> Strip:
    """Row `y` of a chart's text (`chart_lines`) with its styles: the label, the chart's
    cells (marks and markers in styles of their own) and the value (`SpanStyles`)."""
    label, chart, value, odd, marker, fault, reference, reference_in = styles
    chart_end = LABEL_WIDTH + columns
    cells = row[LABEL_WIDTH:chart_end]
    stats = row[chart_end:]
    if y == 0 and any(mark in stats for mark in NONFINITE_MARKS):
        value = odd  # `NaN`, `∞`, `$NaN`: the span beside it is finite by construction
    if _SPECIAL.isdisjoint(cells):
        middle: list[Segment] = [Segment(cells, chart)]
    else:
        by_glyph = {
            FAULT_GLYPH: fault,
            REF_GLYPH: reference,
            REF_IN_GLYPH: reference_in,
            **dict.fromkeys(NONFINITE_GLYPHS, odd),
        }
        middle = [
            Segment("".join(run), by_glyph.get(glyph, marker) if special else chart)
            for (special, glyph), run in groupby(
                cells, lambda c: (c in _SPECIAL, c if c in _SPECIAL else "")
            )
        ]
    return Strip(
        [Segment(row[:LABEL_WIDTH], label), *middle, Segment(stats, value if y == 0 else label)],
        len(row),
    )


SPAN_NAMES = (
    "label",
    "chart",
    "value",
    "nonfinite",
    "marker",
    "fault",
    "reference",
    "reference-in",
)
"""The `sparkline--…` component classes, in `chart_strip`'s order."""


class SpanStyles:
    """A widget's `sparkline--…` styles over its base style, in `SPAN_NAMES` order (kept
    while the base style and the theme hold: each is a CSS lookup)."""

    def __init__(self, widget: Widget) -> None:
        self._widget = widget
        self._key: tuple[Style, str] | None = None
        self._styles: tuple[Style, ...] = ()

    def over(self, base: Style) -> tuple[Style, ...]:
        widget = self._widget
        key = (base, widget.app.theme)
        if key != self._key:
            self._key = key
            self._styles = tuple(
                base + widget.get_component_rich_style(f"sparkline--{name}", partial=True)
                for name in SPAN_NAMES
            )
        return self._styles


def changed_regions(old: list[str], new: list[str]) -> list[Region] | None:
    """The regions where `new` differs from `old`; None for the whole widget."""
    if len(old) != len(new):
        return None
    regions: list[Region] = []
    for y, (before, after) in enumerate(zip(old, new, strict=True)):
        if before == after:
            continue
        if (
            len(before) != len(after)
            or cell_len(after) != len(after)
            or cell_len(before) != len(before)
        ):
            return None  # a wide character: characters are not cells, redraw it all
        x, width = _changed_span(before, after)
        regions.append(Region(x, y, width, 1))
    return regions


def _figure(view: ChartView, width: int) -> str:
    text = metric_value(view.unit, view.value)
    return metric_compact(view.unit, view.value) if len(text) > width else text


def _ref_figure(view: ChartView, width: int) -> str:
    """The reference's value (`—` where it has none: before its start or past its end)."""
    text = metric_value(view.unit, view.ref_value)
    return metric_compact(view.unit, view.ref_value) if len(text) > width else text
