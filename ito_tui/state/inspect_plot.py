"""The inspector's columns: points bucketed on an x axis (W&B's min–max band and last
value per column), TensorBoard's debiased EMA, and a reference run's points aligned
onto our x axis. Pure, no Textual.

A rewound run repeats steps: on the step axis a column over a rewound stretch holds both
branches, the abandoned one and the resumed one, so its band spans both (the rewind is
drawn, never hidden) while its last value (the line) and its readout are the newest
point by seq: the branch the run kept. On the tokens and time axes the branches do not
overlap when tokens/time moved on, and are drawn one after the other.
"""

from __future__ import annotations

import math
import sys
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from .buckets import kind_bit
from .inspect_points import Point, XAxis, x_of

__all__ = ["PlotColumn", "aligned", "axis_map", "bucket", "ema", "interpolate", "plotted"]


@dataclass(frozen=True, slots=True)
class PlotColumn:
    """One column of the inspector's plot.

    `lo`, `hi` and `last` are in plotted units (log10 of the value when log-Y) and over
    the drawable values only (finite, and > 0 when log-Y): a NaN or an infinity sets its
    bit in `odd` and never moves the scale. The points are the real samples behind
    them, in raw units, for the readout.
    """

    lo: float | None
    hi: float | None
    last: float | None
    """The newest drawable value of the column (the line goes through it)."""
    odd: int
    """`NAN_BIT | POS_INF_BIT | NEG_INF_BIT` of the column's non-finite values."""
    first: Point | None
    """The column's oldest point by seq."""
    low_point: Point | None
    high_point: Point | None
    last_point: Point | None
    """The column's newest point by seq (NaN too): what the readout names."""
    count: int = 0
    """Points in the column."""
    hidden: int = 0
    """Finite values ≤ 0 not drawn (log-Y)."""


def plotted(value: float, log_y: bool) -> float | None:
    """`value` in plotted units, or None when it cannot be drawn (non-finite; ≤ 0 in log)."""
    if value - value != 0.0:
        return None
    if log_y:
        return math.log10(value) if value > 0 else None
    return value


def ema(values: Sequence[float], weight: float) -> list[float]:
    """TensorBoard's smoothing, debiased: `last = last*w + (1-w)*v; n += 1;
    smoothed = last / (1 - w**n)` (no debias at `w == 1`). As TensorBoard's
    `classicSmoothing` does, a non-finite value is passed through as it is and does not
    enter the average, and a constant series is returned unchanged."""
    if not values:
        return []
    w = weight if math.isfinite(weight) else 0.0
    w = min(1.0, max(0.0, w))
    first = values[0]
    if all(v == first for v in values):  # TensorBoard #786; NaN == NaN is False, so not here
        return list(values)
    last, n = 0.0, 0
    out: list[float] = []
    for v in values:
        if v - v != 0.0:
            out.append(v)
            continue
        last = last * w + (1 - w) * v
        n += 1
        out.append(last / (1 - w**n) if w != 1 else last)
    return out


def bucket(
    pairs: Sequence[tuple[float, Point]],
    x_lo: float,
    x_hi: float,
    width: int,
    *,
    log_y: bool = False,
    smooth: Sequence[float] | None = None,
) -> tuple[list[PlotColumn | None], list[float | None] | None]:
    """(x, point) pairs ordered by seq, bucketed into `width` columns over [x_lo, x_hi]:
    the columns, and per column the smoothed value (`smooth[i]` is pair i's) of its
    newest point with a drawable one, in plotted units (None without `smooth`).

    Points outside the range are left out; a zero-wide range puts every point at it in
    the last column.
    """
    n = max(1, width)
    last = n - 1
    # In halves, as `inspect_points.plot_column`: a range across the whole float line is
    # wider than the largest float, and an inf scale of 0 would stack every point last.
    scale = n / (x_hi / 2 - x_lo / 2) if x_hi > x_lo else 0.0
    cols: list[list[Point]] = [[] for _ in range(n)]
    smoothed: list[float | None] | None = None if smooth is None else [None] * n
    for i, (x, p) in enumerate(pairs):
        if not x_lo <= x <= x_hi:  # NaN too
            continue
        c = int((x / 2 - x_lo / 2) * scale) if scale else last
        if c > last:
            c = last
        cols[c].append(p)
        if smoothed is not None and smooth is not None:
            s = plotted(smooth[i], log_y)
            if s is not None:
                smoothed[c] = s
    return [_column(points, log_y) if points else None for points in cols], smoothed


def _column(points: list[Point], log_y: bool) -> PlotColumn:
    inf = math.inf
    lo, hi = inf, -inf
    last: float | None = None
    low_point = high_point = None
    odd = hidden = 0
    log10 = math.log10
    for p in points:
        y = p.value
        if y - y != 0.0:  # non-finite: marked, never scaled
            odd |= kind_bit(y)
            continue
        if log_y:
            if y <= 0:
                hidden += 1
                continue
            y = log10(y)
        if y < lo:
            lo, low_point = y, p
        if y > hi:
            hi, high_point = y, p
        last = y
    drawn = low_point is not None
    return PlotColumn(
        lo if drawn else None,
        hi if drawn else None,
        last,
        odd,
        points[0],
        low_point,
        high_point,
        points[-1],
        len(points),
        hidden,
    )


# ---------------------------------------------------------------- alignment


def _key(point: Point, by: XAxis, t0: float) -> float:
    return point.ts - t0 if by == "time" else x_of(point, by)


def axis_map(
    ours: Sequence[Point], axis: XAxis, by: XAxis, *, t0: float = 0.0
) -> tuple[list[float], list[float]]:
    """Our points as the map from `by` (time: seconds since `t0`) to `axis`, ascending,
    one x per key: the newest point's (the branch a rewind kept). `ours` is non-empty."""
    newest: dict[float, tuple[int, float]] = {}
    for p in ours:
        k = _key(p, by, t0)
        if k not in newest or p.seq > newest[k][0]:
            newest[k] = (p.seq, x_of(p, axis))
    ks = sorted(newest)
    return ks, [newest[k][1] for k in ks]


def interpolate(ks: Sequence[float], xs: Sequence[float], k: float) -> float:
    """x at `k` on the piecewise-linear map `ks` → `xs` (`ks` ascending, non-empty);
    beyond its ends, the line through its ends (or a shift with one point)."""
    if len(ks) == 1 or ks[0] == ks[-1]:
        return xs[0] + (k - ks[0])
    i = bisect_left(ks, k)
    if i == 0 or i == len(ks):
        a, b = (0, len(ks) - 1)
    else:
        a, b = i - 1, i
    if ks[b] == ks[a]:
        return xs[b]
    # In halves: a difference of two floats near the range's ends overflows to inf, and
    # inf / inf is NaN; halves never overflow. The result is clamped to the float range
    # (an extrapolation past it is the axis' edge).
    t = (k / 2 - ks[a] / 2) / (ks[b] / 2 - ks[a] / 2)
    x = xs[a] + 2 * ((xs[b] / 2 - xs[a] / 2) * t)
    return x if math.isnan(x) else max(-sys.float_info.max, min(sys.float_info.max, x))


def aligned(
    ref: Sequence[Point], ours: Sequence[Point], axis: XAxis, by: XAxis = "tokens"
) -> list[tuple[float, Point]]:
    """Each of `ref`'s points (ordered by seq) at its x on our `axis`, matched by `by`:
    by tokens seen, the x where our run had seen as many tokens; by step, where it was at
    that step; by time, as long after our first sample as the point was after the
    reference's first. Matching by the axis itself keeps the reference's own x (time:
    shifted to our start). Without points of ours only `by == axis` can align."""
    ordered = sorted(ref, key=lambda p: p.seq)
    if not ordered:
        return []
    r0 = min(p.ts for p in ordered)
    if by == axis:
        if axis != "time":
            return [(x_of(p, axis), p) for p in ordered]
        t0 = min(p.ts for p in ours) if ours else r0
        return [(t0 + p.ts - r0, p) for p in ordered]
    if not ours:
        return []
    ks, xs = axis_map(ours, axis, by, t0=min(p.ts for p in ours))
    return [(interpolate(ks, xs, _key(p, by, r0)), p) for p in ordered]
