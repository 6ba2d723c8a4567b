"""Where things go on the inspector's plot: marks at their columns, the y range, the
steps a zoomed view should fetch, and the notes under the plot. Pure, no Textual."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ito_tui.format import integer, nonfinite, to_float

from .buckets import kind_bit
from .inspect_plot import PlotColumn, axis_map, interpolate
from .inspect_points import Mark, Point, XAxis, plot_column

__all__ = ["column_at", "notes", "place_marks", "ref_between", "step_range", "y_range"]


def column_at(x: float, x_lo: float, x_hi: float, width: int) -> int | None:
    """The column of `x` on a plot of [x_lo, x_hi] (as `inspect_plot.bucket` counts);
    None outside it."""
    if not x_lo <= x <= x_hi:  # NaN too
        return None
    return plot_column(x, x_lo, x_hi, width)


def place_marks(
    marks: Sequence[Mark],
    ours: Sequence[Point],
    axis: XAxis,
    x_lo: float,
    x_hi: float,
    width: int,
) -> tuple[tuple[int, Mark], ...]:
    """(column, mark) of the marks inside [x_lo, x_hi], by column then seq. A mark goes at
    its own step (tokens, time) on that axis, else at the x our points had at its step
    (a rewind's tokens), else at its time (a gate's step)."""
    maps: dict[str, tuple[list[float], list[float]]] = {}

    def through(by: XAxis, k: float) -> float | None:
        if not ours:
            return None
        if by not in maps:
            maps[by] = axis_map(ours, axis, by)
        ks, xs = maps[by]
        return interpolate(ks, xs, k)

    placed: list[tuple[int, Mark]] = []
    for m in marks:
        if axis == "time":
            x: float | None = m.ts
        else:
            own = m.step if axis == "step" else m.tokens
            if own is not None:
                x = float(own)
            elif m.step is not None:
                x = through("step", to_float(m.step))
            else:
                x = through("time", m.ts)
        column = None if x is None else column_at(x, x_lo, x_hi, width)
        if column is not None:
            placed.append((column, m))
    placed.sort(key=lambda cm: (cm[0], cm[1].seq))
    return tuple(placed)


def step_range(
    xs: Sequence[float], ours: Sequence[Point], x_lo: float, x_hi: float
) -> tuple[int, int] | None:
    """The steps of the points in [x_lo, x_hi] and of the nearest point beyond each side
    (`xs[i]` is `ours[i]`'s x): the finer data a zoomed view should fetch."""
    below = above = None
    below_x, above_x = -math.inf, math.inf
    steps: list[int] = []
    for x, p in zip(xs, ours, strict=True):
        if x < x_lo:
            if x > below_x:
                below_x, below = x, p.step
        elif x > x_hi:
            if x < above_x:
                above_x, above = x, p.step
        else:
            steps.append(p.step)
    steps.extend(s for s in (below, above) if s is not None)
    if not steps:
        return None
    return max(0, min(steps)), max(0, max(steps))


def y_range(
    *parts: Sequence[PlotColumn | None] | None,
    smooth: Sequence[float | None] | None,
    log_y: bool = False,
) -> tuple[float | None, float | None]:
    """The plotted extremes of the columns (ours, the reference's) and the EMA, widened
    around a flat line so it has a scale (by 5 %, or half a decade in log-Y)."""
    lows = [c.lo for cols in parts for c in cols or () if c is not None and c.lo is not None]
    highs = [c.hi for cols in parts for c in cols or () if c is not None and c.hi is not None]
    smoothed = [v for v in smooth or () if v is not None]
    if not lows and not smoothed:
        return None, None
    lo, hi = min(lows + smoothed), max(highs + smoothed)
    if hi == lo:
        pad = 0.5 if log_y else abs(lo) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    return lo, hi


def notes(
    columns: Sequence[PlotColumn | None],
    visible: Sequence[Point],
    axis: XAxis,
    log_y: bool,
    marks: Sequence[tuple[int, Mark]] = (),
) -> tuple[str, ...]:
    """What the plot cannot show by itself: values log-Y leaves out, the first
    non-finite value, a stretch of steps a rewind ran twice (`visible` by seq: a sample
    at or below a step already drawn; the stretch starts at the rewind's mark, if any)."""
    out: list[str] = []
    hidden = sum(c.hidden for c in columns if c is not None)
    if log_y and hidden:
        out.append(f"{integer(hidden)} value{'s' if hidden > 1 else ''} ≤ 0 not drawn (log)")
    odd = [p for p in visible if p.value - p.value != 0.0]
    if odd:
        first = odd[0]
        what = nonfinite(first.value) or "NaN"
        more = f" (+{integer(len(odd) - 1)} more non-finite)" if len(odd) > 1 else ""
        out.append(f"{what} at step {integer(first.step)}{more}")
    if axis == "step":
        top: int | None = None
        for p in visible:
            if top is not None and p.step <= top:
                out.append(_rewound(p.step, top, marks))
                break
            top = p.step if top is None else max(top, p.step)
    return tuple(out)


def _rewound(step: int, top: int, marks: Sequence[tuple[int, Mark]]) -> str:
    """The note of steps run twice: from the resumed sample's step (or the rewind's own,
    when a rewind mark says where the run went back to) to the highest step before."""
    back = [m.step for _, m in marks if m.kind == "rewind" and m.step is not None]
    start = max((s for s in back if s <= step), default=step)
    stretch = f"step {integer(top)}" if start >= top else f"steps {integer(start)}–{integer(top)}"
    return f"{stretch} ran twice (rewind): the band holds both, the line the resumed run"


def ref_between(ref_columns: Sequence[PlotColumn | None], cursor: int) -> float | None:
    """The reference's value at `cursor`: its column's newest, else linear between the
    nearest columns on both sides with a finite one (never beyond the reference)."""
    here = ref_columns[cursor]
    if here is not None and here.last_point is not None:
        return here.last_point.value
    left = next(
        ((c, v) for c in range(cursor - 1, -1, -1) if (v := _newest(ref_columns[c])) is not None),
        None,
    )
    right = next(
        (
            (c, v)
            for c in range(cursor + 1, len(ref_columns))
            if (v := _newest(ref_columns[c])) is not None
        ),
        None,
    )
    if left is None or right is None:
        return None
    (ca, a), (cb, b) = left, right
    return a + (b - a) * (cursor - ca) / (cb - ca)


def _newest(col: PlotColumn | None) -> float | None:
    if col is None or col.last_point is None or kind_bit(col.last_point.value):
        return None
    return col.last_point.value
