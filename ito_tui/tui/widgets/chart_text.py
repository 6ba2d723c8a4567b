"""Sparkline text: a `state.views.ChartView` (already bucketed per column) drawn as rows.

An area chart: each column is filled from the bottom up to its bucket's maximum, and the
cells only the maximum reaches are shaded, so a spike or a dip inside a bucket stays
visible. Pure text, no widget: `sparkline.TextSparkline` draws these rows with styles.

Non-finite samples are data (a diverged loss): a column that holds one is marked — `×`
(NaN) and `↑` (+Infinity) on the top row, `↓` (−Infinity) on the bottom row — and the
scale comes from the finite samples only. A huge *finite* value (1e308) is finite: it is
drawn at its true height, so the others sit at the bottom and the min–max label says why
(a log scale would misdraw every ordinary chart); a span too wide for a float (−1e308 to
1e308) is halved before scaling, never a crash.

Markers (a rewind, a fault, the recovery from it, a checkpoint, a gate) are drawn on the
top row, one glyph per kind (`MARKER_GLYPHS`), so they read apart without colour; where
two fall in one column the more urgent one shows (`MARKER_PRIORITY`), and none covers a
non-finite mark (data comes first: a diverged run's gates fell on its `↑`s). A checkpoint is
routine (every few minutes, on every chart): its mark goes only where the top row is
empty, so it never cuts a bar (a full chart read `•███•███•███`), and only while they are
sparse (`ROUTINE_EVERY`): at a demo's speed or over a whole run they fell in every column
and the top row read `•••••••!•••`, which says nothing; the timeline tab lists every
checkpoint.

A reference run (`ChartView.ref_lows`/`ref_highs`, another run aligned on the same
columns) is drawn as a dashed line in the cells its band falls in: `REF_GLYPH` above this
run's area (`sparkline--reference`, dimmer), `REF_IN_GLYPH` inside it (`sparkline--
reference-in`, reversed: the area stays solid with the line cut into it), so the two read
apart without colour; in the cell of this run's own curve (a partial bar) the two agree and
ours is kept, so the line shows where the curves part. Columns it has no value in between
two it has repeat the one before, as this run's do. The scale spans both runs; marks and
markers go over it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from itertools import pairwise

from ito_tui.format import metric_compact, metric_value
from ito_tui.state import NAN_BIT, NEG_INF_BIT, POS_INF_BIT
from ito_tui.state.views import ChartView, MarkerKind

LOWER = " ▁▂▃▄▅▆▇█"
SHADE = "▒"
NAN_GLYPH = "×"
POS_INF_GLYPH = "↑"
NEG_INF_GLYPH = "↓"
NONFINITE_GLYPHS = frozenset({NAN_GLYPH, POS_INF_GLYPH, NEG_INF_GLYPH})
"""Glyphs of non-finite samples (never drawn otherwise: the renderer colours them)."""
REF_GLYPH = "┄"
"""The reference run's line (the legend's `┄ run_… (by tokens)`)."""
REF_IN_GLYPH = "╌"
"""The reference's line where it crosses this run's area (drawn reversed: the area stays
solid, the line cut into it)."""
OURS_GLYPH = "▆"
"""How the legend shows this run's area."""

MARKER_GLYPHS: dict[MarkerKind, str] = {
    "rewind": "↶",
    "fault": "!",
    "recovery": "✓",
    "checkpoint": "•",
    "gate": "◆",
}
"""One single-cell glyph per marker kind, none of them a bar, shade or non-finite mark."""
MARKER_PRIORITY: tuple[MarkerKind, ...] = ("fault", "rewind", "recovery", "gate", "checkpoint")
"""Which marker a column shows when several fall in it: the most urgent first."""
MARKER_WORDS: dict[MarkerKind, str] = {
    "rewind": "rewind",
    "fault": "fault",
    "recovery": "resumed",
    "checkpoint": "ckpt",
    "gate": "gate",
}
"""The caption's legend word for each marker kind."""
ROUTINE: frozenset[MarkerKind] = frozenset({"checkpoint"})
ROUTINE_EVERY = 6
"""Routine marks are drawn only while there is at most one per this many columns (or at
most `ROUTINE_FEW` of them, on a narrow chart)."""
ROUTINE_FEW = 3
"""Marker kinds drawn only on an empty cell, never over a bar."""
FAULT_GLYPH = MARKER_GLYPHS["fault"]
MARKER_SET = frozenset(MARKER_GLYPHS.values())
_RANK = {kind: rank for rank, kind in enumerate(MARKER_PRIORITY)}
_SOLID = frozenset({"█", SHADE})
"""Cells inside this run's area (not its top): the reference's line is cut into them."""


def _level(value: float, lo: float, hi: float, levels: int) -> float:
    if hi <= lo:
        # A flat series: mid-height, or the floor when it sits at zero.
        return 1 if value == 0 else levels / 2
    return (value - lo) / (hi - lo) * levels


def _filled(view: ChartView) -> tuple[list[float | None], list[float | None]]:
    """Columns with no sample between two that have one repeat the previous column, where
    the hole is no longer than the window's usual spacing allows (`fills_hole`).

    A sparse window (fewer samples than columns) would otherwise draw as a comb. A longer
    hole is a silence (a run paused for a decision, an outage): it stays blank, where the
    repeated column drew the loss spike that paused the run as a plateau over the pause.
    """
    lows, highs = list(view.lows), list(view.highs)
    odd = view.odd
    # A column of only non-finite samples is not a hole: it shows its mark, no bar.
    known = [i for i, v in enumerate(highs) if v is not None or (i < len(odd) and odd[i])]
    if len(known) < 2:
        return lows, highs
    pairs = list(pairwise(known))
    usual = sorted(b - a - 1 for a, b in pairs)[len(pairs) // 2]
    for a, b in pairs:
        if b - a > 1 and fills_hole(b - a - 1, usual):
            for i in range(a + 1, b):
                lows[i] = highs[i] = highs[i - 1]
    return lows, highs


def fills_hole(gap: int, usual: int) -> bool:
    """Whether a hole of `gap` empty columns is drawn as the column before it: when it is
    at most twice the window's median spacing `usual` (a sparse window), or one column."""
    return gap <= max(1, 2 * usual)


def _bounded(level: float, levels: int) -> float:
    """`level` kept within a level of the scale's ends. A value far outside a tiny span
    (1e-320 wide) divides to infinity, which has no whole level; past the end of the
    scale, every level draws the same as the one beside the end."""
    return min(max(level, -1.0), levels + 1.0)


def chart_rows(view: ChartView, rows: int) -> list[str]:
    """The chart as `rows` strings (top first), one character per column.

    An area chart: each column is filled from the bottom up to its bucket's maximum;
    cells that only the maximum reaches (above the bucket's minimum) are shaded, so a
    spike or a dip inside a bucket stays visible. The view's `floor` pins the bottom of
    the scale (e.g. 0 for fractions); otherwise the window minimum is the bottom.
    """
    width = len(view.highs)
    floor = view.floor
    lo = view.vmin if floor is None else min(floor, view.vmin if view.vmin is not None else floor)
    hi = view.vmax
    refs = _ref_extent(view)
    if refs is not None:
        # The scale spans both runs: a reference above or below ours is still drawn.
        lo = refs[0] if lo is None else min(lo, refs[0])
        hi = refs[1] if hi is None else max(hi, refs[1])
    if lo is None or hi is None:  # no finite sample: nothing but the marks
        return _marked([[" "] * width for _ in range(rows)], view)
    levels = rows * 8
    lows, highs = _filled(view)
    blank = (" ",) * rows
    columns: list[tuple[str, ...]] = []
    span = hi - lo
    scale = 1.0
    if span == math.inf:  # -1e308 to 1e308: halved, every level is the same
        scale = 0.5
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
    if refs is not None:
        _referenced(grid, view, lo, span, levels, scale)
    return _marked(grid, view)


def _ref_extent(view: ChartView) -> tuple[float, float] | None:
    """The finite (lowest, highest) of the reference's band, None without one."""
    values = [v for v in (*view.ref_lows, *view.ref_highs) if v is not None and v - v == 0.0]
    return (min(values), max(values)) if values else None


def _referenced(
    grid: list[list[str]], view: ChartView, lo: float, span: float, levels: int, scale: float
) -> None:
    """The reference's band drawn over `grid`: `REF_GLYPH` in every cell from its low's
    to its high's, column by column (a column it has no value in between two it has
    repeats the one before; past its last one stays as it is); values times `scale` (a
    halved scale: `chart_rows`). The scale spans the reference, so every level is in
    0..levels. One pass, no call per column: this runs per chart per event."""
    rows = len(grid)
    width = len(grid[0]) if grid else 0
    lows, highs = view.ref_lows, view.ref_highs
    n = min(width, len(lows), len(highs))
    k = levels / span * scale if span > 0 else 0.0
    if k - k != 0.0:  # a span so tiny its inverse is infinite: flat, as `_level` draws it
        k = 0.0
    shift = lo / scale
    flat = round(levels / 2)
    # The cell row (0: the bottom) each level falls in, as `_column_cells` fills them.
    cell_of = [min(rows - 1, (max(1, m) - 1) // 8) for m in range(levels + 1)]
    last = n - 1
    while last >= 0 and highs[last] is None and lows[last] is None:
        last -= 1
    prev: tuple[int, int] | None = None
    for col in range(last + 1):
        low, high = lows[col], highs[col]
        if low is None and high is None:
            if prev is None:
                continue
            a, b = prev  # a hole between two known columns: the one before, repeated
        else:
            low_ok = low is not None and low - low == 0.0
            high_ok = high is not None and high - high == 0.0
            if not (low_ok or high_ok):
                continue  # only non-finite values: nothing to draw
            x = low if low_ok else high
            y = high if high_ok else low
            assert x is not None and y is not None
            if k:
                la, lb = round((x - shift) * k), round((y - shift) * k)
                a = cell_of[0 if la < 0 else levels if la > levels else la]
                b = cell_of[0 if lb < 0 else levels if lb > levels else lb]
            else:
                a = b = cell_of[flat]
            prev = (a, b)
        for r in range(a if a < b else b, (b if a < b else a) + 1):
            row = grid[rows - 1 - r]
            now = row[col]
            if now == " ":
                row[col] = REF_GLYPH
            elif now in _SOLID:
                row[col] = REF_IN_GLYPH
            # A partly filled cell is this run's curve itself: where the reference falls
            # in it the two agree, and our curve's shape stays (the line shows where they
            # part, not where they meet).


def drawn_kinds(view: ChartView) -> frozenset[MarkerKind]:
    """The marker kinds `view` draws: routine ones only while sparse (`ROUTINE_EVERY`)."""
    kinds = {m.kind for m in view.markers}
    routine = {m.column for m in view.markers if m.kind in ROUTINE}
    if len(routine) > max(ROUTINE_FEW, view.width // ROUTINE_EVERY):
        kinds -= ROUTINE
    return frozenset(kinds)


def _marked(grid: list[list[str]], view: ChartView) -> list[str]:
    """`grid` with the non-finite marks and the markers drawn over it, as row strings."""
    width = len(grid[0]) if grid else 0
    for col, bits in enumerate(view.odd[:width]):
        if not bits:
            continue
        if bits & NEG_INF_BIT:
            grid[-1][col] = NEG_INF_GLYPH
        if bits & (NAN_BIT | POS_INF_BIT):
            grid[0][col] = NAN_GLYPH if bits & NAN_BIT else POS_INF_GLYPH
    shown: dict[int, MarkerKind] = {}
    drawn = drawn_kinds(view)
    for marker in view.markers:
        col, kind = marker.column, marker.kind
        if kind not in drawn or not 0 <= col < width:
            continue
        if col not in shown or _RANK[kind] < _RANK[shown[col]]:
            shown[col] = kind
    top = grid[0] if grid else []
    for col, kind in shown.items():
        cell = top[col]
        # A non-finite mark is data (a diverged loss): no marker hides it.
        if cell not in NONFINITE_GLYPHS and (kind not in ROUTINE or cell == " "):
            top[col] = MARKER_GLYPHS[kind]
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


def tight_span(span: str) -> str:
    """A money range with its second `$` dropped (`$13.6K–14.2K`), for a column too
    narrow for `$13.6K–$14.2K`; any other range as it is."""
    low, sep, high = span.partition("–$")
    return f"{low}–{high}" if sep and low.startswith("$") else span


def value_span(low: str, high: str) -> str:
    """`96.2–96.7%`, `75–76 GiB`: a unit both ends share is written once, after the
    range, so a narrow stats column keeps both numbers (it cut `75 GiB–76 GiB` to
    `75 GiB–76 Gi`). Money keeps each end whole, `$7.8K–$8.2K` as the run summary writes
    it (`$7.8–$8.2K` read as 7.8 dollars); `tight_span` drops the second `$`."""
    if low.startswith("$") and high.startswith("$"):
        return f"{low}–{high}"
    n = 0
    while n < min(len(low), len(high)) and low[-1 - n] == high[-1 - n]:
        if low[-1 - n].isdigit():
            break
        n += 1
    if n and low[:-n][-1:].isdigit() and high[:-n][-1:].isdigit():
        return f"{low[:-n]}–{high}"
    return f"{low}–{high}"


def span_text(view: ChartView, width: int) -> str:
    """The range row of a chart: its window's low and high in `width` cells at most."""
    unit = view.unit
    if view.vmin == view.vmax:
        # One value over the whole window: `flat 0`, not a range of one (`0–0`, `86.0–86.0%`)
        # under a chart drawn at one level.
        flat = f"flat {metric_value(unit, view.vmin)}"
        return flat if len(flat) <= width else f"flat {metric_compact(unit, view.vmin)}"
    span = ""
    for form in (metric_value, metric_compact):
        span = value_span(*_distinct_ends(form, unit, view.vmin, view.vmax))
        if len(span) <= width:
            return span
    if len(tight := tight_span(span)) <= width:
        return tight
    low, high = metric_compact(unit, view.vmin), metric_compact(unit, view.vmax)
    # Too narrow for the digits that tell the ends apart: about one value, not a range of
    # one (`$13.6K–13.6K`) nor a range cut short (`$13.61K–13.…`).
    return f"~{low}" if low == high else tight_span(value_span(low, high))


def _distinct_ends(
    form: Callable[[str, float | None, int], str], unit: str, low: float | None, high: float | None
) -> tuple[str, str]:
    """`low` and `high` written by `form`, with up to two digits more when the two would
    read the same (`96.21–96.24%`, not `96.2–96.2%`: a chart scaled to a window that
    varies below the shown precision draws swings its range row must not deny)."""
    for extra in (0, 1, 2):
        ends = form(unit, low, extra), form(unit, high, extra)
        if ends[0] != ends[1]:
            return ends
    return form(unit, low, 0), form(unit, high, 0)
