"""A reference run on the small charts: its points put on our chart's columns, matched by
tokens seen (default), step or time since each run's first sample.

A chart's columns are ranges of the samples' time (the bank's x); the bank's hidden
`tokens_seen` and `step` series say which tokens (steps) each column covers, and the
reference's points in that range make the column's band. A column the reference has no
point in (it was sampled more coarsely) takes its value interpolated there, so the line
has no holes; beyond the reference's own range a column has none.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from ito_tui.format import to_float
from ito_tui.textsafe import one_line

from .buckets import finite_parts, kind_bit
from .grid import column_edges, column_of
from .inspect_plot import interpolate
from .inspect_points import Point, XAxis

if TYPE_CHECKING:
    from .bank import TelemetryBank
    from .inspect_points import Reference
    from .telemetry import TelemetrySeries
    from .views import ChartView

__all__ = ["BY_WORDS", "RefCache", "RefColumns", "ref_chart", "with_reference"]

BY_WORDS: dict[XAxis, str] = {"tokens": "by tokens", "step": "by step", "time": "by time"}
"""How a legend says a reference was aligned."""
REF_LABEL_WIDTH = 48
"""Characters of a reference's label a legend keeps."""

RefColumns = tuple[tuple[float | None, ...], tuple[float | None, ...], float | None]
"""(lows, highs, value at our newest x) of a reference on a chart."""
_HIDDEN: dict[XAxis, str] = {"tokens": "tokens_seen", "step": "step"}


class RefCache:
    """A bank's reference overlays as last drawn, so a redraw with no new sample (and the
    same reference) costs nothing; bounded by `MAX_ENTRIES` (charts × widths × windows)."""

    MAX_ENTRIES = 64
    __slots__ = ("_keyed", "_overlays")

    def __init__(self) -> None:
        self._overlays: dict[tuple[object, ...], tuple[object, RefColumns]] = {}
        self._keyed: dict[tuple[int, XAxis, str | None], tuple[object, Keyed]] = {}

    def keyed(self, ref: tuple[Point, ...], by: XAxis, stage: str | None) -> Keyed:
        """`_keyed(ref, by, stage)`, once per reference key (`ref` is kept: its id stays
        its)."""
        key = (id(ref), by, stage)
        hit = self._keyed.get(key)
        if hit is not None and hit[0] is ref:
            return hit[1]
        if len(self._keyed) >= self.MAX_ENTRIES:
            self._keyed.clear()
        out = _keyed(ref, by, stage)
        self._keyed[key] = (ref, out)
        return out

    def overlay(
        self, key: tuple[object, ...], ref: tuple[Point, ...], compute: Callable[[], RefColumns]
    ) -> RefColumns:
        hit = self._overlays.get(key)
        if hit is not None and hit[0] is ref:
            return hit[1]
        if len(self._overlays) >= self.MAX_ENTRIES:
            self._overlays.clear()
        out = compute()
        self._overlays[key] = (ref, out)
        return out


class Keyed(NamedTuple):
    """A reference's values ordered by key, with their finite parts for min/max at C speed
    (`buckets.finite_parts`: a non-finite value is +inf in `lo`, -inf in `hi`)."""

    ks: list[float]
    vs: array[float]
    lo: array[float]
    hi: array[float]


def _keyed(ref: Sequence[Point], by: XAxis, stage: str | None = None) -> Keyed:
    """The reference's values ordered by key: tokens, step (of `stage`'s points only, when
    they say their stage: steps count from 0 in each), or seconds since its first sample;
    one value per key (the newest by seq: the branch a rewind kept)."""
    if by == "step" and stage is not None and any(p.stage for p in ref):
        ref = [p for p in ref if p.stage == stage]
    if not ref:
        return Keyed([], array("d"), array("d"), array("d"))
    r0 = min(p.ts for p in ref)
    newest: dict[float, Point] = {}
    for p in ref:
        k = p.ts - r0 if by == "time" else to_float(p.tokens if by == "tokens" else p.step)
        if k not in newest or p.seq > newest[k].seq:
            newest[k] = p
    ks = sorted(newest)
    vs = array("d", [newest[k].value for k in ks])
    return Keyed(ks, vs, *finite_parts(vs))


def _at(ks: Sequence[float], vs: Sequence[float], k: float) -> float | None:
    """The reference at key `k`, linear between its finite neighbours; None outside it."""
    if not ks or k < ks[0] or k > ks[-1]:
        return None
    i = bisect_left(ks, k)
    if ks[i] == k:
        return vs[i] if not kind_bit(vs[i]) else None
    a, b = vs[i - 1], vs[i]
    if kind_bit(a) or kind_bit(b):
        return None
    return interpolate(ks[i - 1 : i + 1], [a, b], k)


def _key_ranges(
    bank: TelemetryBank, series: TelemetrySeries, width: int, window_s: float | None, by: XAxis
) -> list[tuple[float, float] | None]:
    """Per column of `series`' chart, the range of our key (tokens, step, or seconds
    since our first sample) its samples cover; by step, only the current stage's columns
    (an earlier stage's steps are not this stage's)."""
    ranges = _all_key_ranges(bank, series, width, window_s, by)
    since = bank.stage_since
    if by != "step" or since is None:
        return ranges
    edges = column_edges(series.first_x or 0.0, series.last_x or 0.0, width, window_s)
    return [None if edges[c + 1] <= since else r for c, r in enumerate(ranges)]


def _all_key_ranges(
    bank: TelemetryBank, series: TelemetrySeries, width: int, window_s: float | None, by: XAxis
) -> list[tuple[float, float] | None]:
    anchor = bank.hidden["step"]
    first, last = series.first_x, series.last_x
    if first is None or last is None or anchor.first_x is None:
        return [None] * width
    edges = column_edges(first, last, width, window_s)
    if by == "time":
        t0 = anchor.first_x
        return [(edges[c] - t0, min(edges[c + 1], last) - t0) for c in range(width)]
    hidden = bank.hidden[_HIDDEN[by]]
    if hidden.first_x is None or hidden.last_x is None:
        return [None] * width
    h_view = hidden.view(width, window_s)
    h_edges = column_edges(hidden.first_x, hidden.last_x, width, window_s)
    if h_edges == edges:  # the usual case: the metric is in every sample
        return [
            None if col is None or col.min is None or col.max is None else (col.min, col.max)
            for col in h_view.columns
        ]
    out: list[tuple[float, float] | None] = []
    for c in range(width):
        j0 = column_of(edges[c], h_edges)
        j1 = max(j0, min(width - 1, bisect_left(h_edges, edges[c + 1]) - 1))
        lows = [col.min for col in h_view.columns[j0 : j1 + 1] if col and col.min is not None]
        highs = [col.max for col in h_view.columns[j0 : j1 + 1] if col and col.max is not None]
        out.append((min(lows), max(highs)) if lows and highs else None)
    return out


def ref_chart(
    bank: TelemetryBank,
    series: TelemetrySeries,
    ref: Sequence[Point],
    width: int,
    window_s: float | None,
    by: XAxis = "tokens",
) -> RefColumns:
    """The reference `ref` on `series`' chart (`width` columns over `window_s`)."""
    width = max(1, int(width))
    stage = bank.stage
    cache = bank.ref_cache
    keyed = cache.keyed(ref, by, stage) if isinstance(ref, tuple) else _keyed(ref, by, stage)
    ks, vs, lo, hi = keyed
    if not ks or series.count == 0:
        return (None,) * width, (None,) * width, None
    lows: list[float | None] = []
    highs: list[float | None] = []
    for span in _key_ranges(bank, series, width, window_s, by):
        if span is None:
            lows.append(None)
            highs.append(None)
            continue
        a, b = bisect_left(ks, span[0]), bisect_right(ks, span[1])
        low = min(lo[a:b]) if a < b else math.inf
        if low != math.inf:
            lows.append(low)
            highs.append(max(hi[a:b]))
        else:
            mid = _at(ks, vs, (span[0] + span[1]) / 2)
            lows.append(mid)
            highs.append(mid)
    return tuple(lows), tuple(highs), _at(ks, vs, _newest_key(bank, by))


def _newest_key(bank: TelemetryBank, by: XAxis) -> float:
    anchor = bank.hidden["step"]
    if by == "time":
        first, last = anchor.first_x, anchor.last_x
        return 0.0 if first is None or last is None else last - first
    value = bank.hidden[_HIDDEN[by]].last
    return 0.0 if value is None else value


def with_reference(
    chart: ChartView,
    series: TelemetrySeries | None,
    bank: TelemetryBank,
    reference: Reference | None,
    by: XAxis,
    window_s: float | None,
) -> ChartView:
    """`chart` (of `series`) with `reference` drawn on it; `chart` itself without one."""
    if reference is None:
        return chart
    label = f"{one_line(reference.label, REF_LABEL_WIDTH)} ({BY_WORDS[by]})"
    points = reference.get(chart.key)
    if series is None or not points:
        empty = (None,) * chart.width
        return replace(chart, ref_lows=empty, ref_highs=empty, ref_label=label)
    hidden = bank.hidden["step"]
    ours = (series.count, series.last_x, hidden.count, hidden.last_x)
    stamp = (chart.key, chart.width, window_s, by, id(points), *ours)
    lows, highs, value = bank.ref_cache.overlay(
        stamp, points, lambda: ref_chart(bank, series, points, chart.width, window_s, by)
    )
    return replace(chart, ref_lows=lows, ref_highs=highs, ref_value=value, ref_label=label)
