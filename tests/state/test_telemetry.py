"""TelemetrySeries: bounded memory from 10^3 to 10^7 samples, views that never hide extremes."""

from __future__ import annotations

import itertools
import math
import random
import sys
import tracemalloc
from array import array
from collections import deque
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.contract import TelemetrySample
from ito_tui.state import METRICS, TelemetryBank, TelemetrySeries
from ito_tui.state.grid import column_edges, column_of

from .sequence import telemetry_data


def footprint(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes of `obj` and every container it holds (arrays, lists, deques, rings)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, (list, tuple, deque)):
        size += sum(footprint(x, seen) for x in obj)
    elif isinstance(obj, dict):
        size += sum(footprint(k, seen) + footprint(v, seen) for k, v in obj.items())
    elif isinstance(obj, (array, str, int, float)) or obj is None:
        pass
    else:
        attrs = getattr(obj, "__dict__", None) or {
            n: getattr(obj, n) for n in getattr(type(obj), "__slots__", ())
        }
        size += sum(footprint(v, seen) for v in attrs.values())
    return size


def fill(series: TelemetrySeries, start: int, stop: int) -> None:
    append = series.append
    for i in range(start, stop):
        append(float(i), math.sin(i / 977.0) + (i % 7) * 0.01)


def test_memory_is_bounded_from_1e3_to_1e6_samples() -> None:
    s = TelemetrySeries("loss")
    fill(s, 0, 1_000)
    at = {1_000: footprint(s)}
    for n in (100_000, 1_000_000):
        fill(s, max(at), n)
        at[n] = footprint(s)
    assert s.count == 1_000_000
    # Growth is a few fixed-size levels, never proportional to the sample count.
    assert at[1_000_000] - at[1_000] <= 160 * 1024, at
    assert at[1_000_000] - at[100_000] <= 64 * 1024, at
    assert s.nbytes() <= s.max_nbytes()
    assert footprint(s) <= s.max_nbytes() + 16 * 1024


def test_tracemalloc_agrees_with_the_structural_measure() -> None:
    """The structure walk above must not miss memory: check it against tracemalloc once."""
    tracemalloc.start()
    try:
        s = TelemetrySeries("loss")
        fill(s, 0, 1_000)
        traced_small = tracemalloc.get_traced_memory()[0]
        walked_small = footprint(s)
        fill(s, 1_000, 150_000)
        traced_big = tracemalloc.get_traced_memory()[0]
        walked_big = footprint(s)
    finally:
        tracemalloc.stop()
    traced_growth = traced_big - traced_small
    walked_growth = walked_big - walked_small
    assert walked_growth > 0
    assert traced_growth <= walked_growth + 16 * 1024, (traced_growth, walked_growth)


def test_last_level_compacts_so_memory_stops_growing() -> None:
    s = TelemetrySeries("x", raw=16, bucket=2, buckets=8, levels=3)
    fill(s, 0, 2_000)
    size = footprint(s)
    fill(s, 2_000, 200_000)
    # Equal up to scalars (a larger int count, an open bucket list or not).
    assert abs(footprint(s) - size) <= 256
    assert s.nbytes() == s.max_nbytes() - 48 * 256  # every level allocated, no markers
    v = s.view(50)
    assert v.x_start == 0.0 and v.x_end == 199_999.0
    assert all(c is not None for c in v.columns)
    assert v.min == s.min and v.max == s.max


@pytest.mark.slow
@pytest.mark.long(seconds=14)
def test_memory_from_1e3_to_1e7_samples() -> None:
    s = TelemetrySeries("loss")
    fill(s, 0, 1_000)
    small = footprint(s)
    fill(s, 1_000, 5_000_000)
    mid = footprint(s)
    fill(s, 5_000_000, 10_000_000)
    big = footprint(s)
    assert big - small <= 200 * 1024
    assert big - mid <= 1024 * 1024
    v = s.view(120)
    assert v.min == pytest.approx(s.min) and v.max == pytest.approx(s.max)


def test_a_bank_stays_within_5_mb_whatever_the_run_length() -> None:
    bank = TelemetryBank()
    assert set(bank.series) == {m.key for m in METRICS}
    assert sum(s.max_nbytes() for s in bank.series.values()) <= 5 * 1024 * 1024


# ------------------------------------------------------------ views

values = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@st.composite
def ys_strategy(draw: st.DrawFn) -> list[float]:
    """Short hand-picked lists, or long noisy ones with rare deep dips and spikes."""
    if draw(st.booleans()):
        return draw(st.lists(values, min_size=1, max_size=200))
    rng = random.Random(draw(st.integers(0, 2**32)))
    n = draw(st.integers(200, 3000))
    return [
        rng.choice((-1e5, 1e5)) * rng.random() if rng.random() < 0.002 else rng.gauss(2.0, 0.1)
        for _ in range(n)
    ]


@settings(max_examples=150, deadline=None)
@given(
    ys=ys_strategy(),
    width=st.integers(1, 120),
    window=st.none() | st.floats(0.0, 4000.0),
    step=st.sampled_from([1.0, 0.5, 3.0]),
)
def test_view_never_hides_a_value(
    ys: list[float], width: int, window: float | None, step: float
) -> None:
    s = TelemetrySeries("x", raw=64, bucket=4, buckets=16, levels=3)
    for i, y in enumerate(ys):
        s.append(i * step, y)
    v = s.view(width, window)
    assert v.width == width
    assert v.last == ys[-1]
    assert v.columns[-1] is not None and v.columns[-1].last == ys[-1]
    inside = [y for i, y in enumerate(ys) if i * step >= v.x_start]
    # Every value in the window lies within the window's drawn range ...
    assert v.min is not None and v.max is not None
    assert v.min <= min(inside) and v.max >= max(inside)
    # ... and a whole-run view draws exactly the global extremes.
    if window is None:
        assert (v.min, v.max) == (min(ys), max(ys)) == (s.min, s.max)
    edges = column_edges(0.0, (len(ys) - 1) * step, width, window)
    assert edges[0] == v.x_start
    for i, y in enumerate(ys):
        x = i * step
        if x < v.x_start:
            continue
        c = column_of(x, edges)
        assert edges[c] <= x < edges[c + 1] or c == width - 1, (i, x, c)
        near = [col for col in v.columns[max(0, c - 1) : c + 2] if col is not None]
        assert any(col.min <= y <= col.max for col in near), (i, y, c)


def test_a_one_sample_dip_survives_folding_into_coarse_buckets() -> None:
    s = TelemetrySeries("loss")
    for i in range(300_000):
        s.append(float(i), -50.0 if i == 1234 else 2.0 + 0.001 * math.sin(i))
    v = s.view(80)
    assert v.min == -50.0
    assert sum(1 for c in v.columns if c is not None and c.min == -50.0) >= 1
    assert v.columns[0] is not None and v.columns[0].min == -50.0  # the dip is early in the run


def test_windows_select_the_recent_part() -> None:
    s = TelemetrySeries("x")
    for i in range(10_000):
        s.append(float(i), float(i))
    v = s.view(10, window=900.0)
    assert (v.x_start, v.x_end) == (9_099.0, 9_999.0)
    assert v.min == 9_099.0 and v.max == 9_999.0
    assert v.columns[0] is not None and v.columns[0].min == 9_099.0


def test_gaps_markers_and_x_going_back() -> None:
    s = TelemetrySeries("x")
    assert s.view(5).columns == (None,) * 5 and s.view(5).min is None
    s.append(0.0, 1.0)
    s.append(1.0, None)
    assert s.count == 1 and s.last == 1.0
    s.append(10.0, 3.0)
    s.add_marker(5.0, "rewind 300→200")
    s.append(4.0, 2.0)  # x went back: clamped to 10 and marked
    assert s.last_x == 10.0
    labels = [label for _, label in s.markers]
    assert labels == ["rewind 300→200", "x went back"]
    v = s.view(11)
    assert (5, "rewind 300→200") in v.markers
    assert v.columns[0] == (1.0, 1.0, 1.0, 0)
    assert v.columns[-1] is not None and v.columns[-1].min == 2.0 and v.columns[-1].max == 3.0


def test_bank_ingests_every_metric() -> None:
    bank = TelemetryBank()
    data = telemetry_data(1, 100)
    data["rl"] = {
        "reward_mean": 0.4,
        "entropy": 1.5,
        "max_staleness_steps": 3,
        "staleness_bound": 4,
        "filtered_group_frac": 0.2,
        "ess_frac": 0.7,
    }
    sample = TelemetrySample.model_validate(data)
    bank.ingest(sample, x=60.0)
    assert bank["loss"].last == 2.5 and bank["loss"].last_x == 60.0
    assert bank["mfu"].last == 0.37
    assert bank["goodput"].last == 0.87 and bank["goodput_runtime"].last == 0.97
    assert bank["spend_usd"].last == 1.5
    assert bank["rl_ess"].last == 0.7 and bank["rl_staleness"].last == 3.0
    assert all(m.key in bank for m in METRICS)
    bank.ingest(TelemetrySample.model_validate(telemetry_data(2, 110)))
    assert bank["rl_ess"].count == 1  # no rl block: nothing appended
    assert bank["loss"].last_x == sample.ts.timestamp() + 1


class CountingSeries(TelemetrySeries):
    """Counts bucket pushes, cascades into coarser levels included."""

    __slots__ = ("pushes",)

    def __init__(self) -> None:
        super().__init__("x", raw=8, bucket=2, buckets=4, levels=4)
        self.pushes = 0

    def _push(self, k: int, *bucket: float) -> None:
        self.pushes += 1
        super()._push(k, *bucket)


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_append_work_per_sample_is_constant(n: int) -> None:
    """Not a timing assertion: each sample is folded once and the bucket moves made
    by the cascade form a geometric series, so pushes per sample stay under 1."""
    s = CountingSeries()
    for i in range(n):
        s.append(float(i), random.random())
    assert 0.5 <= s.pushes / n <= 1.0


def test_a_view_is_recomputed_only_when_the_series_changed() -> None:
    s = TelemetrySeries("x")
    for i in range(100):
        s.append(float(i), float(i))
    v = s.view(20)
    assert s.view(20) is v
    assert s.view(21) is not v and s.view(20, window=10.0) is not v
    s.add_marker(50.0, "rewind")
    marked = s.view(20)
    # The whole run over 20 columns: a step of 99 / 19 rounded down to 5.19 (a power of
    # 2^(1/16)), so 50 falls in the tenth column, [46.7, 51.9).
    assert marked is not v and (9, "rewind") in marked.markers
    s.append(100.0, -1.0)
    assert s.view(20).min == -1.0


def test_a_whole_run_view_keeps_its_columns_while_the_run_grows_a_little() -> None:
    """The whole run is spread over the width on a grid whose step moves only when the run
    has grown by 2^(1/width): until then a new sample changes the column it falls in and
    no other, so a view recomputes one or two columns, not all of them."""
    s = TelemetrySeries("x")
    for i in range(1000):
        s.append(float(i), math.sin(i * 1.7) + (i * 7919 % 13) * 0.1)
    width = 30
    before = s.view(width)
    edges = column_edges(0.0, 999.0, width, None)
    steps = {round(b - a, 9) for a, b in itertools.pairwise(edges[1:-1])}
    assert len(steps) == 1  # every column but the first is one step wide
    step = steps.pop()
    assert 999.0 / 29 / 2 ** (1 / 30) < step <= 999.0 / 29
    assert step <= edges[1] - edges[0] < 1.7 * step  # the oldest: never a sliver
    s.append(1000.0, 5.0)
    after = s.view(width)
    assert column_edges(0.0, 1000.0, width, None)[1:] == edges[1:]
    assert after.columns[:-1] == before.columns[:-1]
    assert after.columns[-1] is not None and after.columns[-1].max == 5.0
    for i in range(1001, 1050):  # 5 % more (2^(1/30) is 2.3 %): the step moves up
        s.append(float(i), 0.0)
    later = column_edges(0.0, 1049.0, width, None)
    assert later[3] - later[2] > step


@pytest.mark.parametrize(
    ("first", "last", "window"),
    [
        (-1.7e308, 1.7e308, None),  # finite ends, an infinite span
        (-1.7e308, 1.7e308, 1e308),
        (0.0, 1e-320, None),  # a span below what a step can count
        (5.0, 5.0, None),
        (0.0, math.nan, None),
    ],
)
def test_column_edges_of_extreme_ends_are_edges_not_an_error(
    first: float, last: float, window: float | None
) -> None:
    edges = column_edges(first, last, 10, window)
    assert len(edges) == 11 and edges[-1] == math.inf
    if not math.isnan(last):  # finite ends: edges from the first, in order, none NaN
        assert edges[0] == first or window is not None
        assert edges == sorted(edges) and not any(map(math.isnan, edges)), edges


def test_a_windowed_view_keeps_its_columns_on_a_fixed_grid() -> None:
    """A new sample changes only the column it falls in (and the first, which the
    window's start slides through); the grid scrolls by whole columns."""
    s = TelemetrySeries("x")
    for i in range(10_000):
        s.append(float(i), math.sin(i * 1.7) + (i * 7919 % 13) * 0.1)
    width, window = 30, 900.0  # one column per 30 s, cell 333 = [9990, 10020)
    before = s.view(width, window)
    s.append(10_005.0, 5.0)  # inside the last column's cell
    after = s.view(width, window)
    assert after.columns[1:-1] == before.columns[1:-1]
    assert after.columns[-1] is not None and after.columns[-1].max == 5.0
    assert (after.x_start, after.x_end) == (9_105.0, 10_005.0)
    s.append(10_020.0, 0.0)  # the first sample of the next cell: everything moves one left
    scrolled = s.view(width, window)
    assert scrolled.columns[1:-1] == after.columns[2:]
    assert scrolled.columns[-1] == (0.0, 0.0, 0.0, 0)


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.floats(0.0, 40.0),  # x advance (0: same x; the series clamps none here)
            st.none() | values,  # y (None: a gap)
            st.booleans(),  # look at the view after this sample
        ),
        min_size=1,
        max_size=400,
    ),
    width=st.integers(1, 60),
    window=st.none() | st.floats(1.0, 3000.0),
    widths_change=st.booleans(),
)
def test_a_view_updated_column_by_column_equals_one_computed_afresh(
    steps: list[tuple[float, float | None, bool]],
    width: int,
    window: float | None,
    widths_change: bool,
) -> None:
    """Views reuse the last view's columns (only the first, the newest and the folded ones
    are recomputed); whatever was looked at before, a view equals a fresh series' view."""
    params = {"raw": 32, "bucket": 2, "buckets": 8, "levels": 3}  # folds and compacts soon
    kept = TelemetrySeries("x", **params)
    x = 0.0
    appended: list[tuple[float, float | None]] = []
    for i, (dx, y, look) in enumerate(steps):
        x += dx
        kept.append(x, y)
        appended.append((x, y))
        if i % 7 == 3:
            kept.add_marker(x, "rewind")
        if look:
            w = width + (i % 3 if widths_change else 0)
            fresh = TelemetrySeries("x", **params)
            for j, (fx, fy) in enumerate(appended):
                fresh.append(fx, fy)
                if j % 7 == 3:
                    fresh.add_marker(fx, "rewind")
            assert kept.view(w, window) == fresh.view(w, window), (i, w)


def test_folding_inside_the_window_updates_the_columns_it_reaches() -> None:
    """A raw ring shorter than the window: samples fold into buckets inside it, and a
    bucket that now spans a column edge changes both columns."""
    params = {"raw": 4, "bucket": 2, "buckets": 4, "levels": 2}
    kept = TelemetrySeries("x", **params)
    ys = [math.sin(i * 1.3) * 10 + (i % 5) for i in range(300)]
    for i, y in enumerate(ys):
        kept.append(float(i), y)
        fresh = TelemetrySeries("x", **params)
        for j in range(i + 1):
            fresh.append(float(j), ys[j])
        assert kept.view(10, 30.0) == fresh.view(10, 30.0), i


def test_a_window_whose_grid_rounds_past_the_newest_x_still_draws_it_last() -> None:
    # Found by test_view_never_hides_a_value: a window of 1e-4 over 5 columns puts its
    # grid's last edge at floor(199 / 2e-5) * 2e-5, a hair above 199: the newest sample
    # fell in the column before, and the last column drew nothing.
    s = TelemetrySeries("x", raw=64, bucket=4, buckets=16, levels=3)
    for i in range(200):
        s.append(float(i), 2.0 + i / 1000)
    v = s.view(5, 0.0001)
    assert v.columns[-1] is not None and v.columns[-1].last == s.last
