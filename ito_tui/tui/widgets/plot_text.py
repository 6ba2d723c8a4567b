"""The inspector's plot as text: an `InspectorView` drawn as rows of (text, style name) runs.

Braille cells (2×4 dots, U+2800–U+28FF), not eighth blocks. A block glyph fills a cell
from its bottom up, so it draws an area well (the small charts) but not a *line* or a
band that floats mid-cell: the last value, the EMA over it and a reference beside it
would each need their own cell. Braille dots are set anywhere in the cell and layers
combine by OR-ing dots, so the band, the raw line, the EMA and the reference share the
plot at 4 dots per row and 2 per column; the braille block is in every font tmux users
run and one cell wide everywhere. The line is joined column to column (the left dot
column runs from the previous value to this one), the reference is a dotted line (one
dot per column, never joined): a pattern, so it reads apart without colour, and the
legend draws each sample in its own style.

Under 16 colours (`ito-ansi`) or NO_COLOR a dimmer band and a bolder EMA cannot be told
apart by shade, so `plain=True` draws each layer with its own ASCII character, one level
per row: `:` band, `*` last value, `o` EMA (`@` where both), `+` reference. The marker
row keeps `chart_text`'s glyphs (the small charts show the same ones in every theme).

Rows, top down: the readout (two rows), the plot (y ticks and units on the left), the
marker row, the x ticks, the legend and notes. The cursor's column is drawn in the
`cursor` style (reversed) on every plot row. Backend words (a mark's label, a metric's
name) are plain text here: the widget writes them as segments, never markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import groupby

from ito_tui.format import count, integer, metric_value, nonfinite, percent, usd
from ito_tui.state import NAN_BIT, NEG_INF_BIT, POS_INF_BIT
from ito_tui.state.inspect import InspectorView, Mark, PlotColumn, Readout
from ito_tui.textsafe import one_line

from .chart_text import MARKER_GLYPHS, MARKER_PRIORITY, NAN_GLYPH, NEG_INF_GLYPH, POS_INF_GLYPH

__all__ = ["FIXED_ROWS", "Y_WIDTH", "Run", "exact", "plot_columns", "plot_lines"]

Run = tuple[str, str]
"""(text, style name): `band`, `line`, `ema`, `ref`, `gap`, `axis`, `text`, `readout`,
`nonfinite`, `marker`, `fault`; a plot cell under the cursor adds `|cursor`."""

Y_WIDTH = 11
"""Cells left of the plot: the y tick labels and the axis."""
READOUT_ROWS = 2
FIXED_ROWS = READOUT_ROWS + 3
"""Rows that are not plot: the readout, the marker row, the x ticks, the legend."""

GLYPHS: dict[str, str] = {**dict(MARKER_GLYPHS.items()), "proposal": "?"}
"""One glyph per mark kind: the small charts' (`chart_text`), and `?` for a proposal."""
_RANK = {kind: rank for rank, kind in enumerate((*MARKER_PRIORITY, "proposal"))}
_LAYERS = ("ema", "line", "ref", "band")
"""Which layer names a cell where several meet: the first present."""
_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
"""Braille dot bits by (dot column, dot row from the top)."""


def plot_columns(width: int) -> int:
    """How many columns the plot draws in a widget `width` cells wide."""
    return max(4, width - Y_WIDTH)


def exact(unit: str, value: float | None) -> str:
    """A readout's value, with the digits a chart hides: `2.3456789`, `96.25%`, `NaN`."""
    if value is None:
        return "—"
    mark = nonfinite(value)
    if mark is not None:
        return mark
    if unit == "fraction":
        return percent(value, 2)
    if unit == "usd":
        return usd(value)
    if unit in ("gib", "steps"):
        return metric_value(unit, value)
    return f"{value:.8g}"


class _Grid:
    """Dots of each layer per plot cell, `rows` × `cols`."""

    def __init__(self, rows: int, cols: int, plain: bool) -> None:
        self.rows, self.cols, self.plain = rows, cols, plain
        self.levels = rows if plain else rows * 4
        self.layers = {name: [0] * (rows * cols) for name in _LAYERS}
        self.lo, self.hi = 0.0, 1.0
        """The y range drawn (plotted units)."""

    def level(self, value: float, lo: float, hi: float) -> int:
        top = self.levels - 1
        if hi <= lo:
            return top // 2
        raw = (value - lo) / (hi - lo) * top
        return max(0, min(top, round(raw))) if math.isfinite(raw) else top // 2

    def dots(self, layer: str, col: int, sides: tuple[int, ...], a: int, b: int) -> None:
        """Set the dots of `layer` in column `col` from level `a` to `b` (inclusive)."""
        cells, cols, top = self.layers[layer], self.cols, self.levels - 1
        lo, hi = (a, b) if a <= b else (b, a)
        if self.plain:
            for level in range(lo, hi + 1):
                cells[(top - level) * cols + col] = 1
            return
        for level in range(lo, hi + 1):
            g = top - level
            bits = 0
            for side in sides:
                bits |= _BITS[side][g & 3]
            cells[(g >> 2) * cols + col] |= bits


def _line(grid: _Grid, layer: str, values: Sequence[float | None]) -> None:
    """A joined line through `values` (one per column): each column's left dots run from
    the level before to its own, its right dot is its own; columns with no value between
    two that have one are bridged (a straight line), a non-finite one breaks the line."""
    lo, hi = grid.lo, grid.hi
    prev: tuple[int, int] | None = None
    for col, value in enumerate(values[: grid.cols]):
        if value is None:
            continue
        if not math.isfinite(value):
            prev = None
            continue
        now = grid.level(value, lo, hi)
        if prev is not None and prev[0] < col - 1:
            start, level = prev
            for gap in range(start + 1, col):  # bridged: linear between the two
                at = round(level + (now - level) * (gap - start) / (col - start))
                grid.dots(layer, gap, (0, 1), prev[1], at)
                prev = (gap, at)
        grid.dots(layer, col, (0,), now if prev is None else prev[1], now)
        grid.dots(layer, col, (1,), now, now)
        prev = (col, now)


def _draw_columns(grid: _Grid, view: InspectorView) -> None:
    lo, hi = view.y_lo, view.y_hi
    if lo is None or hi is None:
        return
    grid.lo, grid.hi = lo, hi
    level = grid.level
    lasts: list[float | None] = []
    for col, column in enumerate(view.columns[: grid.cols]):
        if column is None:
            lasts.append(None)
            continue
        # A column of only non-finite values breaks the line (its mark says what).
        lasts.append(column.last if column.last is not None else math.nan)
        if column.lo is not None and column.hi is not None:
            grid.dots("band", col, (0, 1), level(column.lo, lo, hi), level(column.hi, lo, hi))
    _line(grid, "line", lasts)
    if view.smooth is not None:
        _line(grid, "ema", view.smooth)
    for col, ref in enumerate((view.ref_columns or ())[: grid.cols]):
        if ref is not None and ref.last is not None:
            now = level(ref.last, lo, hi)
            grid.dots("ref", col, (0,), now, now)  # one dot a column: the dotted pattern


def _odd_cells(grid: _Grid, columns: Sequence[PlotColumn | None]) -> dict[tuple[int, int], str]:
    """(row, column) → glyph of the non-finite marks: NaN and +inf on the top row, -inf on
    the bottom one (drawn over the dots, in the `nonfinite` style)."""
    plain, out = grid.plain, {}
    for c, column in enumerate(columns[: grid.cols]):
        odd = 0 if column is None else column.odd
        if odd & NEG_INF_BIT:
            out[(grid.rows - 1, c)] = "v" if plain else NEG_INF_GLYPH
        if odd & (NAN_BIT | POS_INF_BIT):
            nan = odd & NAN_BIT
            out[(0, c)] = ("x" if nan else "^") if plain else NAN_GLYPH if nan else POS_INF_GLYPH
    return out


def _plot_runs(grid: _Grid, columns: Sequence[PlotColumn | None]) -> list[list[Run]]:
    """Each plot row as runs of one style (one glyph a cell): the layer that names a cell
    is the first of `_LAYERS` in it; non-finite marks over the dots."""
    rows, cols, plain = grid.rows, grid.cols, grid.plain
    ema, line, ref, band = (grid.layers[name] for name in _LAYERS)
    odd = _odd_cells(grid, columns)
    out: list[list[Run]] = []
    for r in range(rows):
        lo = r * cols
        runs: list[Run] = []
        text: list[str] = []
        current = ""
        cells = zip(ema[lo : lo + cols], line[lo : lo + cols], ref[lo : lo + cols],
                    band[lo : lo + cols], strict=True)  # fmt: skip
        for c, (e, ln, f, b) in enumerate(cells):
            style = "ema" if e else "line" if ln else "ref" if f else "band" if b else "gap"
            if odd and (r, c) in odd:
                glyph, style = odd[(r, c)], "nonfinite"
            elif style == "gap":
                glyph = " "
            elif plain:
                glyph = ("@" if ln else "o") if e else "*" if ln else "+" if f else ":"
            else:
                glyph = chr(0x2800 + (e | ln | f | b))
            if style != current:
                if text:
                    runs.append(("".join(text), current))
                text, current = [], style
            text.append(glyph)
        if text:
            runs.append(("".join(text), current))
        out.append(runs)
    return out


def _y_labels(view: InspectorView, grid: _Grid) -> list[str]:
    """The left column of each plot row: tick labels at their rows, the axis line."""
    rows, plain = grid.rows, grid.plain
    axis, tick = ("|", "+") if plain else ("│", "┤")
    labels = [" " * (Y_WIDTH - 1) + axis for _ in range(rows)]
    lo, hi = view.y_lo, view.y_hi
    if lo is None or hi is None:
        return labels
    for value, text in view.y_ticks:
        level = grid.level(value, lo, hi)
        row = (grid.levels - 1 - level) // (1 if plain else 4)
        if 0 <= row < rows:
            labels[row] = f"{one_line(text, Y_WIDTH - 2):>{Y_WIDTH - 2}} {tick}"
    return labels


def _readout(view: InspectorView, width: int) -> list[str]:
    ro: Readout | None = view.readout
    unit, label = view.unit, one_line(view.label, 40)
    if ro is None or ro.step is None:
        here = _marks_text(ro.marks) if ro is not None else ""
        return [one_line("no sample in this column", width), one_line(here, width)]
    at = f" · {ro.at:%Y-%m-%d %H:%M:%S} UTC" if ro.at is not None else ""
    first = f"step {integer(ro.step)} · {label} {exact(unit, ro.value)}{at}"
    parts = [f"bucket {exact(unit, ro.lo)} – {exact(unit, ro.hi)}"]
    if ro.tokens is not None:
        parts.append(f"{count(ro.tokens)} tokens")
    if view.ref_columns is not None:
        diff = "" if ro.diff is None else f" (Δ {_signed(unit, ro.diff)})"
        parts.append(f"ref {exact(unit, ro.ref_value)}{diff}")
    if ro.marks:
        parts.append(_marks_text(ro.marks))
    return [one_line(first, width), one_line(" · ".join(parts), width)]


def _signed(unit: str, value: float) -> str:
    text = exact(unit, value)
    return text if text.startswith(("-", "−")) or nonfinite(value) else f"+{text}"


def _marks_text(marks: Sequence[Mark]) -> str:
    """The marks of the cursor's column, the most urgent first (a cut row keeps it)."""
    words = []
    for mark in sorted(marks, key=lambda m: _RANK.get(m.kind, len(_RANK))):
        kind, label = getattr(mark, "kind", ""), getattr(mark, "label", "")
        words.append(f"{GLYPHS.get(kind, '·')} {one_line(str(label), 60)}")
    return " · ".join(words)


def _marker_row(view: InspectorView, cols: int) -> list[Run]:
    shown: dict[int, str] = {}
    for col, mark in view.marks:
        if 0 <= col < cols and (col not in shown or _RANK[mark.kind] < _RANK[shown[col]]):
            shown[col] = mark.kind
    cells: list[Run] = [(" ", "text")] * cols
    for col, kind in shown.items():
        cells[col] = (GLYPHS[kind], "fault" if kind == "fault" else "marker")
    return cells


def _x_row(view: InspectorView, cols: int) -> str:
    row = [" "] * cols
    free = 0
    for col, text in view.x_ticks:
        text = one_line(text, cols)
        start = min(col, cols - len(text))
        if start < free or start < 0:
            continue
        row[start : start + len(text)] = text
        free = start + len(text) + 2
    return "".join(row)


def _legend(view: InspectorView, plain: bool, width: int) -> list[Run]:
    samples = (
        {"line": "*", "band": ":", "ema": "o", "ref": "+"}
        if plain
        else {"line": "⠤⠤", "band": "⣿", "ema": "⠤⠤", "ref": "⠂⠂"}
    )
    runs: list[Run] = [(samples["line"], "line"), (f" {one_line(view.label, 30)}  ", "text")]
    runs += [(samples["band"], "band"), (" min–max  ", "text")]
    weight = view.viewport.weight
    if view.smooth is not None:
        runs += [(samples["ema"], "ema"), (f" EMA {weight:g}  ", "text")]
    if view.ref_columns is not None:
        runs += [
            (samples["ref"], "ref"),
            (f" {one_line(view.ref_label or 'reference', 40)}  ", "text"),
        ]
    kinds = {mark.kind for _, mark in view.marks}
    runs += [(f"{GLYPHS[k]} {k}  ", "text") for k in sorted(kinds, key=_RANK.__getitem__)]
    if view.notes:
        runs.append((" · ".join(one_line(n, 80) for n in view.notes), "text"))
    return _cut(runs, width)


def _cut(runs: list[Run], width: int) -> list[Run]:
    out: list[Run] = []
    room = width
    for text, style in runs:
        if room <= 0:
            break
        if len(text) > room:
            text = text[: room - 1] + "…"
        out.append((text, style))
        room -= len(text)
    if room > 0:
        out.append((" " * room, "text"))
    return out


def _joined(cells: list[Run]) -> list[Run]:
    """Runs of equal style joined into one (one segment each)."""
    return [("".join(t for t, _ in run), style) for style, run in groupby(cells, lambda c: c[1])]


_Body = tuple[list[tuple[str, list[Run]]], list[list[Run]]]
"""The plot rows (axis label, cells joined into runs) and the rows under them."""
_body: list[tuple[tuple[object, ...], _Body]] = []
"""The last body drawn and what it was drawn from: a cursor move (`with_cursor`) keeps
the columns, so only the readout and the cursor's column are drawn again."""


def _body_of(view: InspectorView, width: int, plot_rows: int, plain: bool) -> _Body:
    key = (view.columns, view.smooth, view.ref_columns, view.ref_label, view.y_lo, view.y_hi,
           view.y_ticks, view.x_ticks, view.marks, view.notes, view.label,
           view.viewport.weight, width, plot_rows, plain)  # fmt: skip
    if _body and _body[0][0] == key:
        return _body[0][1]
    cols = plot_columns(width)
    grid = _Grid(plot_rows, cols, plain)
    _draw_columns(grid, view)
    runs = _plot_runs(grid, view.columns)
    rows = list(zip(_y_labels(view, grid), runs, strict=True))
    marker_label = f"{'marks':>{Y_WIDTH - 2}}  "
    under = [
        [(marker_label, "axis"), *_joined(_marker_row(view, cols))],
        [(" " * Y_WIDTH, "axis"), (_x_row(view, cols), "axis")],
        _legend(view, plain, width),
    ]
    body = (rows, [_fit(line, width) for line in under])
    _body[:] = [(key, body)]
    return body


def _with_cursor(runs: list[Run], cursor: int) -> list[Run]:
    """`runs` (one glyph a cell) with the cell at `cursor` in its style `|cursor`."""
    out: list[Run] = []
    at = 0
    for text, style in runs:
        end = at + len(text)
        if at <= cursor < end:
            i = cursor - at
            if i:
                out.append((text[:i], style))
            out.append((text[i], f"{style}|cursor"))
            if i + 1 < len(text):
                out.append((text[i + 1 :], style))
        else:
            out.append((text, style))
        at = end
    return out


def plot_lines(
    view: InspectorView | None, width: int, height: int, *, plain: bool
) -> list[list[Run]]:
    """The plot `width` × `height` cells as rows of runs (see the module's docstring)."""
    cols = plot_columns(width)
    plot_rows = max(1, height - FIXED_ROWS)
    if view is None:
        blank = [[(" " * width, "text")] for _ in range(height)]
        blank[0] = [(one_line("no data yet", width).ljust(width), "readout")]
        return blank
    rows, under = _body_of(view, width, plot_rows, plain)
    cursor = view.cursor if 0 <= view.cursor < cols else -1
    lines: list[list[Run]] = [[(text.ljust(width), "readout")] for text in _readout(view, width)]
    for label, runs in rows:
        line = [(label, "axis"), *(_with_cursor(runs, cursor) if cursor >= 0 else runs)]
        lines.append(_fit(line, width))
    lines.extend(under)
    return lines[:height]


def _fit(line: list[Run], width: int) -> list[Run]:
    length = sum(len(t) for t, _ in line)
    if length < width:
        return [*line, (" " * (width - length), "text")]
    return line if length == width else _cut(line, width)
