"""The chart inspector's view: one metric's points drawn `width` columns wide on a chosen
x axis (step, tokens seen or time), with its band, line, EMA, a reference run, ticks,
marks and the cursor's readout. Pure, no Textual: the inspector screen draws
`InspectorView` and nothing else.

The pieces live beside this module: points, marks and references (`inspect_points`),
the viewport and its transitions (`inspect_axis`), bucketing, EMA and alignment
(`inspect_plot`), what is computed before the range (`inspect_prepare`), placement and
notes (`inspect_layout`), ticks (`inspect_ticks`); a run's marks (`inspect_marks`) and a
reference on the small charts (`inspect_ref`). This module re-exports what screens use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from ito_tui.format import stage_label
from ito_tui.textsafe import one_line

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
from .inspect_layout import notes, place_marks, ref_between, step_range, y_range
from .inspect_plot import PlotColumn, bucket, ema
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
)
from .inspect_prepare import fingerprint, prepare
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
    "with_cursor",
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
    stage: str | None = None
    """The stage whose steps the step axis shows, when the points span several."""
    ref_smooth: tuple[float | None, ...] | None = None
    """The reference's EMA per column, at the same weight (None: smoothing 0 or no
    reference): TensorBoard smooths every run it draws alike."""

    @property
    def width(self) -> int:
        return len(self.columns)


_Memo = tuple[tuple[object, ...], tuple[object, ...], "InspectorView"]
_memo: list[_Memo] = []
"""The last view drawn and what it was drawn from (the inputs held, so the marks' id
stays theirs): a cursor move redraws only the readout (`with_cursor`)."""


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
    stage: str | None = None,
) -> InspectorView:
    """`points` (any order; each seq once: `merge_points`) drawn `width` columns wide as
    `vp` says, with `ref` (a reference's points of the same key, aligned by `ref_by`)
    and `marks`. `ref_label` is the reference's own label; the view's adds how it was
    aligned. `now` decides which time ticks carry their date (default: the newest
    point's time, the run's clock).

    Steps count from 0 in each stage, so the step axis shows one stage: `stage`, else
    the one most points are of (pretraining, over a whole run), with the reference's
    points of that stage and the marks of its time; tokens seen and time show them all.

    Drawing the same inputs again with only the cursor moved reuses the last view's
    columns (`with_cursor`): O(width) and a hash of the points, whatever their number.
    """
    width = max(1, int(width))
    held = (points, ref, marks)
    inputs = (
        fingerprint(points),
        None if ref is None else fingerprint(ref),
        (id(marks), len(marks)),
        replace(vp, cursor=-1),
        width,
        key,
        label,
        unit,
        ref_label,
        ref_by,
        now,
        y_tick_count,
        stage,
    )
    if _memo and _memo[0][1] == inputs:
        return with_cursor(_memo[0][2], vp)
    view = _draw(
        points, ref, marks, vp, width, key, label, unit, ref_label, ref_by, now, y_tick_count, stage
    )
    _memo[:] = [(held, inputs, view)]
    return view


def _draw(
    points: Sequence[Point],
    ref: Sequence[Point] | None,
    marks: Sequence[Mark],
    vp: Viewport,
    width: int,
    key: str,
    label: str,
    unit: Unit,
    ref_label: str | None,
    ref_by: XAxis,
    now: datetime | None,
    y_tick_count: int,
    stage: str | None,
) -> InspectorView:
    axis = vp.axis
    prep = prepare(points, ref, axis, ref_by, vp.weight, stage)
    if prep.stage is not None:
        t0, t1 = prep.window
        marks = [m for m in marks if t0 <= m.ts < t1]
    ordered, xs, pairs, ref_pairs, smooth_in = prep[:5]
    extent = xs or [x for x, _ in ref_pairs] or [0.0]
    x_min, x_max = min(extent), max(extent)
    x_lo, x_hi = (vp.lo, vp.hi) if vp.lo is not None and vp.hi is not None else (x_min, x_max)
    columns, smooth = bucket(pairs, x_lo, x_hi, width, log_y=vp.log_y, smooth=smooth_in)
    ref_columns, ref_smooth = (
        bucket(ref_pairs, x_lo, x_hi, width, log_y=vp.log_y, smooth=prep.ref_smooth)
        if ref is not None
        else (None, None)
    )
    y_lo, y_hi = y_range(
        columns, ref_columns, smooth=[*(smooth or ()), *(ref_smooth or ())], log_y=vp.log_y
    )
    if now is None:
        now = datetime.fromtimestamp(max((p.ts for p in ordered), default=0.0), UTC)
    visible = [p for x, p in pairs if x_lo <= x <= x_hi]
    placed = place_marks(marks, ordered, axis, x_lo, x_hi, width)
    view = InspectorView(
        key=key,
        label=label,
        unit=unit,
        viewport=vp,
        x_lo=x_lo,
        x_hi=x_hi,
        columns=tuple(columns),
        smooth=None if smooth is None else tuple(smooth),
        ref_columns=None if ref_columns is None else tuple(ref_columns),
        ref_label=None if ref is None else _ref_label(ref_label, ref_by),
        ref_smooth=None if ref_smooth is None else tuple(ref_smooth),
        y_lo=y_lo,
        y_hi=y_hi,
        y_ticks=y_ticks(y_lo, y_hi, unit, vp.log_y, y_tick_count),
        x_ticks=x_ticks(x_lo, x_hi, width, axis, now),
        marks=placed,
        readout=None,
        notes=_stage_note(prep.stage) + notes(columns, visible, axis, vp.log_y, placed),
        x_min=x_min,
        x_max=x_max,
        step_range=step_range(xs, ordered, x_lo, x_hi),
        stage=prep.stage,
    )
    return with_cursor(view, vp)


def _stage_note(stage: str | None) -> tuple[str, ...]:
    if stage is None:
        return ()
    return (f"{stage_label(stage)} steps (x: tokens or time for the whole run)",)


def _ref_label(label: str | None, by: XAxis) -> str:
    return f"{one_line(label or 'reference', REF_LABEL_WIDTH)} ({BY_WORDS[by]})"


def with_cursor(view: InspectorView, vp: Viewport) -> InspectorView:
    """`view` with the cursor where `vp` puts it, and its readout (nothing else redrawn)."""
    cursor = cursor_column(vp, view.width)
    if view.readout is not None and cursor == view.cursor and vp == view.viewport:
        return view
    return replace(view, viewport=vp, cursor=cursor, readout=_readout(view, cursor))


def _nearest(columns: Sequence[PlotColumn | None], cursor: int) -> int | None:
    """The column nearest `cursor` holding a point (the left one of two as near)."""
    for d in range(len(columns)):
        for c in (cursor - d, cursor + d):
            if 0 <= c < len(columns) and columns[c] is not None:
                return c
    return None


def _readout(view: InspectorView, cursor: int) -> Readout | None:
    """What the cursor's column says: its newest point, or the nearest column's when it
    has none (the step says which); the marks are the cursor's column's own."""
    at = _nearest(view.columns, cursor)
    if at is None:
        return None
    here = tuple(m for c, m in view.marks if c == cursor)
    col = view.columns[at]
    last = None if col is None else col.last_point
    if col is None or last is None:
        return Readout(None, None, None, None, None, None, None, None, here)
    ref_value = None if view.ref_columns is None else ref_between(view.ref_columns, at)
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
