"""The chart inspector's view: one metric's points drawn `width` columns wide on a chosen
x axis (step, tokens seen or time), with its band, line, EMA, a reference run, ticks,
marks and the cursor's readout. Pure, no Textual: the inspector screen draws
`InspectorView` and nothing else.

The pieces live beside this module: points, marks and references (`inspect_points`),
the viewport and its transitions (`inspect_axis`), bucketing, EMA and alignment
(`inspect_plot`), ticks (`inspect_ticks`). This module re-exports them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ito_tui.format import integer, nonfinite
from ito_tui.textsafe import one_line

from .buckets import kind_bit
from .inspect_axis import (
    MIN_SPAN,
    Viewport,
    cursor_column,
    cycle_axis,
    cycle_smoothing,
    move_cursor,
    pan,
    reset,
    toggle_log,
    wanted_steps,
    zoom,
)
from .inspect_plot import PlotColumn, aligned, axis_map, bucket, ema, interpolate
from .inspect_points import (
    MAX_REF_POINTS,
    SMOOTHING,
    Mark,
    MarkKind,
    Point,
    Reference,
    XAxis,
    merge_points,
    points_of,
    x_of,
)
from .inspect_ref import BY_WORDS, REF_LABEL_WIDTH
from .inspect_ticks import x_ticks, y_ticks
from .metrics import Unit

__all__ = [
    "MAX_REF_POINTS",
    "MIN_SPAN",
    "SMOOTHING",
    "InspectorView",
    "Mark",
    "MarkKind",
    "PlotColumn",
    "Point",
    "Readout",
    "Reference",
    "Viewport",
    "XAxis",
    "cursor_column",
    "cycle_axis",
    "cycle_smoothing",
    "ema",
    "inspector_view",
    "merge_points",
    "move_cursor",
    "pan",
    "points_of",
    "reset",
    "toggle_log",
    "wanted_steps",
    "zoom",
]


@dataclass(frozen=True, slots=True)
class Readout:
    """What the cursor's column says, in raw units (never log10)."""

    value: float | None
    """The column's newest value (NaN or ±inf too)."""
    lo: float | None
    """The bucket's lowest and highest drawable value."""
    hi: float | None
    step: int | None
    tokens: int | None
    at: datetime | None
    """UTC."""
    ref_value: float | None
    """The reference's value at the same x (its column's newest, else interpolated)."""
    diff: float | None
    """`value - ref_value`."""
    marks: tuple[Mark, ...]
    """The marks in the cursor's column, oldest first."""


@dataclass(frozen=True, slots=True)
class InspectorView:
    """Everything the inspector draws. Columns, EMA, y range and y ticks are in plotted
    units (log10 of the value when `viewport.log_y`); the readout is in raw units."""

    key: str
    label: str
    unit: Unit
    viewport: Viewport
    x_lo: float
    """The x range drawn, on `viewport.axis`."""
    x_hi: float
    columns: tuple[PlotColumn | None, ...]
    """Min–max band and last value per column (None: no point in it)."""
    smooth: tuple[float | None, ...] | None
    """The EMA per column (None: smoothing 0); the raw columns stay drawn under it."""
    ref_columns: tuple[PlotColumn | None, ...] | None
    """The reference on the same x (None: no reference)."""
    ref_label: str | None
    """E.g. "run_abc (by tokens)": the reference's label and how it was aligned."""
    y_lo: float | None
    y_hi: float | None
    y_ticks: tuple[tuple[float, str], ...]
    """(value in plotted units, label with unit)."""
    x_ticks: tuple[tuple[int, str], ...]
    """(column, label): `182K`, `1.2B`, `Nov 30 14:03`."""
    marks: tuple[tuple[int, Mark], ...]
    """(column, mark) of the marks inside the range, by column then seq."""
    readout: Readout | None
    notes: tuple[str, ...]
    """E.g. "3 values ≤ 0 not drawn (log)", "NaN at step 1,200"."""
    x_min: float = 0.0
    """The data's extent on the axis (zoom and pan stay inside it)."""
    x_max: float = 0.0
    step_range: tuple[int, int] | None = None
    """The steps of the visible points and one beyond each side (`wanted_steps`)."""
    cursor: int = 0
    """The cursor's column (`viewport.cursor` resolved: never -1)."""

    @property
    def width(self) -> int:
        return len(self.columns)


def _column_of(x: float, x_lo: float, x_hi: float, width: int) -> int | None:
    if x < x_lo or x > x_hi:
        return None
    if x_hi <= x_lo:
        return width - 1
    return min(width - 1, int((x - x_lo) / (x_hi - x_lo) * width))


def _mark_x(mark: Mark, axis: XAxis, ours: Sequence[Point]) -> float | None:
    """Where `mark` goes on `axis`: its own step/tokens/time, else mapped through our
    points (a rewind's tokens from its step, a gate's step from its time)."""
    if axis == "time":
        return mark.ts
    own = mark.step if axis == "step" else mark.tokens
    if own is not None:
        return float(own)
    if not ours:
        return None
    if mark.step is not None:
        ks, xs = axis_map(ours, axis, "step")
        return interpolate(ks, xs, float(mark.step))
    ks, xs = axis_map(ours, axis, "time")
    return interpolate(ks, xs, mark.ts)


def _step_range(
    pairs: Sequence[tuple[float, Point]], x_lo: float, x_hi: float
) -> tuple[int, int] | None:
    """The steps of the points in [x_lo, x_hi] and of the nearest point beyond each side."""
    below: tuple[float, int] | None = None
    above: tuple[float, int] | None = None
    steps: list[int] = []
    for x, p in pairs:
        if x < x_lo:
            if below is None or x > below[0]:
                below = (x, p.step)
        elif x > x_hi:
            if above is None or x < above[0]:
                above = (x, p.step)
        else:
            steps.append(p.step)
    for edge in (below, above):
        if edge is not None:
            steps.append(edge[1])
    if not steps:
        return None
    return max(0, min(steps)), max(0, max(steps))


def _notes(
    columns: Sequence[PlotColumn | None],
    visible: Sequence[Point],
    axis: XAxis,
    log_y: bool,
) -> tuple[str, ...]:
    notes: list[str] = []
    hidden = sum(c.hidden for c in columns if c is not None)
    if log_y and hidden:
        notes.append(f"{integer(hidden)} value{'s' if hidden > 1 else ''} ≤ 0 not drawn (log)")
    odd = [p for p in visible if kind_bit(p.value)]
    if odd:
        first = odd[0]
        what = nonfinite(first.value) or "NaN"
        more = f" (+{integer(len(odd) - 1)} more non-finite)" if len(odd) > 1 else ""
        notes.append(f"{what} at step {integer(first.step)}{more}")
    if axis == "step":
        top: int | None = None
        for p in visible:
            if top is not None and p.step < top:
                notes.append(
                    f"steps {integer(p.step)}–{integer(top)} ran twice (rewind): "
                    "the band holds both, the line the resumed run"
                )
                break
            top = p.step if top is None else max(top, p.step)
    return tuple(notes)


def _y_range(
    *parts: Sequence[PlotColumn | None] | None, smooth: Sequence[float | None] | None
) -> tuple[float | None, float | None]:
    values: list[float] = []
    for cols in parts:
        for c in cols or ():
            if c is not None and c.lo is not None and c.hi is not None:
                values.extend((c.lo, c.hi))
    values.extend(v for v in smooth or () if v is not None)
    if not values:
        return None, None
    lo, hi = min(values), max(values)
    if hi == lo:
        pad = abs(lo) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    return lo, hi


def _ref_at(pairs: Sequence[tuple[float, Point]], x: float) -> float | None:
    """The reference's value at `x`, linear between its two neighbours (not beyond it)."""
    ordered = sorted(pairs, key=lambda xp: xp[0])
    xs = [xp[0] for xp in ordered]
    if not xs or x < xs[0] or x > xs[-1]:
        return None
    ks, vs = xs, [xp[1].value for xp in ordered]
    return interpolate(ks, vs, x) if len(ks) > 1 else vs[0]


def inspector_view(
    points: Sequence[Point],
    ref: Sequence[Point] | None,
    marks: Sequence[Mark],
    vp: Viewport,
    width: int,
    *,
    key: str,
    label: str,
    unit: Unit,
    ref_label: str | None = None,
    ref_by: XAxis = "tokens",
    now: datetime | None = None,
    y_tick_count: int = 5,
) -> InspectorView:
    """`points` (any order; each seq once: `merge_points`) drawn `width` columns wide as
    `vp` says, with `ref` (a reference's points of the same key, aligned by `ref_by`)
    and `marks`. `ref_label` is the reference's own label; the view's adds how it was
    aligned. `now` decides which time ticks carry their date (default: the newest
    point's time, the run's clock)."""
    width = max(1, int(width))
    axis = vp.axis
    ordered = sorted(points, key=lambda p: p.seq)
    pairs = [(x_of(p, axis), p) for p in ordered]
    ref_pairs = aligned(ref, ordered, axis, ref_by) if ref else []
    extent = [x for x, _ in pairs] or [x for x, _ in ref_pairs] or [0.0]
    x_min, x_max = min(extent), max(extent)
    x_lo, x_hi = (vp.lo, vp.hi) if vp.lo is not None and vp.hi is not None else (x_min, x_max)
    weight = vp.weight
    smooth_in = ema([p.value for p in ordered], weight) if weight > 0 else None
    columns, smooth = bucket(pairs, x_lo, x_hi, width, log_y=vp.log_y, smooth=smooth_in)
    ref_columns = (
        bucket(ref_pairs, x_lo, x_hi, width, log_y=vp.log_y)[0] if ref is not None else None
    )
    y_lo, y_hi = _y_range(columns, ref_columns, smooth=smooth)
    placed = []
    for m in marks:
        mx = _mark_x(m, axis, ordered)
        column = None if mx is None else _column_of(mx, x_lo, x_hi, width)
        if column is not None:
            placed.append((column, m))
    placed.sort(key=lambda cm: (cm[0], cm[1].seq))
    cursor = cursor_column(vp, width)
    if now is None:
        now = datetime.fromtimestamp(max((p.ts for p in ordered), default=0.0), UTC)
    visible = [p for x, p in pairs if x_lo <= x <= x_hi]
    readout = _readout(columns, ref_columns, ref_pairs, placed, cursor, axis) if ordered else None
    return InspectorView(
        key=key,
        label=label,
        unit=unit,
        viewport=vp,
        x_lo=x_lo,
        x_hi=x_hi,
        columns=tuple(columns),
        smooth=None if smooth is None else tuple(smooth),
        ref_columns=None if ref_columns is None else tuple(ref_columns),
        ref_label=None
        if ref is None
        else f"{one_line(ref_label or 'reference', REF_LABEL_WIDTH)} ({BY_WORDS[ref_by]})",
        y_lo=y_lo,
        y_hi=y_hi,
        y_ticks=y_ticks(y_lo, y_hi, unit, vp.log_y, y_tick_count),
        x_ticks=x_ticks(x_lo, x_hi, width, axis, now),
        marks=tuple(placed),
        readout=readout,
        notes=_notes(columns, visible, axis, vp.log_y),
        x_min=x_min,
        x_max=x_max,
        step_range=_step_range(pairs, x_lo, x_hi),
        cursor=cursor,
    )


def _ref_label(label: str | None, by: XAxis) -> str:
    return f"{one_line(label or 'reference', REF_LABEL_WIDTH)} ({BY_WORDS[by]})"


def _readout(
    columns: Sequence[PlotColumn | None],
    ref_columns: Sequence[PlotColumn | None] | None,
    ref_pairs: Sequence[tuple[float, Point]],
    placed: Sequence[tuple[int, Mark]],
    cursor: int,
    axis: XAxis,
) -> Readout:
    here = tuple(m for c, m in placed if c == cursor)
    col = columns[cursor]
    last = None if col is None else col.last_point
    if col is None or last is None:
        return Readout(None, None, None, None, None, None, None, None, here)
    ref_col = None if ref_columns is None else ref_columns[cursor]
    if ref_col is not None and ref_col.last_point is not None:
        ref_value: float | None = ref_col.last_point.value
    else:
        ref_value = _ref_at(ref_pairs, x_of(last, axis)) if ref_pairs else None
    return Readout(
        value=last.value,
        lo=None if col.low_point is None else col.low_point.value,
        hi=None if col.high_point is None else col.high_point.value,
        step=last.step,
        tokens=last.tokens,
        at=datetime.fromtimestamp(last.ts, UTC),
        ref_value=ref_value,
        diff=None if ref_value is None else last.value - ref_value,
        marks=here,
    )
