"""Telemetry series with NaN and ±inf: samples, not gaps; marked, never poisoning a scale."""

from __future__ import annotations

import math
import sys
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ito_tui.contract import TelemetrySample
from ito_tui.state import NAN_BIT, NEG_INF_BIT, POS_INF_BIT, TelemetryBank, TelemetrySeries

from .sequence import telemetry_data

NAN, INF = math.nan, math.inf
SMALL = {"raw": 8, "bucket": 2, "buckets": 4, "levels": 2}
"""A series that folds and compacts after a few dozen samples."""


def bit(y: float) -> int:
    return (
        0
        if math.isfinite(y)
        else NAN_BIT
        if math.isnan(y)
        else POS_INF_BIT
        if y > 0
        else NEG_INF_BIT
    )


def test_non_finite_samples_count_and_can_be_last_but_are_never_min_or_max() -> None:
    s = TelemetrySeries("loss")
    for x, y in enumerate([NAN, 2.0, INF, 1.0, -INF, 3.0, NAN]):
        s.append(float(x), y)
    assert s.count == 7 and math.isnan(s.last or 0.0)
    assert (s.min, s.max) == (1.0, 3.0)
    v = s.view(7)
    assert (v.min, v.max) == (1.0, 3.0)
    assert [c.odd if c else None for c in v.columns] == [
        NAN_BIT, 0, POS_INF_BIT, 0, NEG_INF_BIT, 0, NAN_BIT,
    ]  # fmt: skip
    nan_only = v.columns[0]
    assert nan_only is not None and nan_only.min is None and nan_only.max is None


def test_a_series_of_only_non_finite_samples_has_no_scale_but_every_mark() -> None:
    s = TelemetrySeries("loss")
    for x, y in enumerate([NAN, INF, -INF]):
        s.append(float(x), y)
    v = s.view(3)
    assert v.min is None and v.max is None and v.last == -INF
    assert [c.odd for c in v.columns if c] == [NAN_BIT, POS_INF_BIT, NEG_INF_BIT]


def test_folded_buckets_remember_the_non_finite_kinds_they_hold() -> None:
    s = TelemetrySeries("loss", raw=8, bucket=2, buckets=16, levels=3)
    special = {3: NAN, 40: INF, 77: -INF}
    for i in range(2_000):
        s.append(float(i), special.get(i, 2.0 + math.sin(i)))
    v = s.view(10)  # every special sample is long folded, most into compacted buckets
    assert v.columns[0] is not None
    assert v.columns[0].odd == NAN_BIT | POS_INF_BIT | NEG_INF_BIT
    # The oldest history is the coarsest (a wide bucket marks every column it spans);
    # the newest samples, all finite, are marked nowhere.
    assert v.columns[-1] is not None and v.columns[-1].odd == 0
    assert v.min is not None and v.max is not None
    assert math.isfinite(v.min) and math.isfinite(v.max) and v.min < 1.1 and v.max > 2.9


ys_with_odd = st.lists(
    st.none() | st.sampled_from([NAN, INF, -INF]) | st.floats(-1e6, 1e6), min_size=1, max_size=300
)


def same(a: Any, b: Any) -> bool:
    """Equality in which NaN equals NaN (views hold NaN as a column's last value)."""
    return repr(a) == repr(b)


@settings(max_examples=200, deadline=None)
@given(ys=ys_with_odd, width=st.integers(1, 50), window=st.none() | st.floats(1.0, 400.0))
@example(ys=[0.0] + [NAN] * 9, width=1, window=8.0)
def test_a_view_shows_every_finite_value_and_marks_every_non_finite_one(
    ys: list[float | None], width: int, window: float | None
) -> None:
    """Also when it was updated column by column: it equals a view computed afresh."""
    s = TelemetrySeries("x", **SMALL)
    for i, y in enumerate(ys):
        s.append(float(i), y)
        if i % 5 == 0:
            s.view(width, window)
    v = s.view(width, window)
    fresh = TelemetrySeries("x", **SMALL)
    for i, y in enumerate(ys):
        fresh.append(float(i), y)
    assert same(v, fresh.view(width, window))
    inside = [(i, y) for i, y in enumerate(ys) if y is not None and i >= v.x_start]
    finite = [y for _, y in inside if math.isfinite(y)]
    everywhere = [y for y in ys if y is not None and math.isfinite(y)]
    if v.x_start <= 0:  # the whole series: its extremes exactly
        assert (v.min, v.max) == ((min(finite), max(finite)) if finite else (None, None))
    else:
        # A stored bucket that reaches into the window counts whole, so its samples just
        # before the window may widen the first column (hypothesis found `[0.0, NaN × 9]`
        # in a window of 8: the bucket of x 0..1 starts it): every finite value inside is
        # within the scale, never lost, and the scale is made of samples the series has.
        if finite:
            assert v.min is not None and v.max is not None
            assert v.min <= min(finite) and max(finite) <= v.max
        assert v.min is None or (v.min in everywhere and v.max in everywhere)
    span = v.x_end - v.x_start
    for i, y in inside:
        c = width - 1 if span == 0 else min(width - 1, int((i - v.x_start) / span * width))
        near = [col for col in v.columns[max(0, c - 1) : c + 2] if col is not None]
        if math.isfinite(y):
            assert any(
                col.min is not None and col.max is not None and col.min <= y <= col.max
                for col in near
            ), (i, y)
        else:
            assert any(col.odd & bit(y) for col in near), (i, y)


def test_the_bank_takes_a_diverged_sample_and_an_int_no_float_can_hold() -> None:
    data = telemetry_data(1, 100, loss=NAN)
    data["grad_norm"] = INF
    data["tokens_per_s_per_gpu"] = None
    data["rl"] = {
        "reward_mean": -INF,
        "entropy": 1.0,
        "max_staleness_steps": 10**400,
        "staleness_bound": 4,
        "filtered_group_frac": NAN,
        "ess_frac": 0.5,
    }
    bank = TelemetryBank()
    bank.ingest(TelemetrySample.model_validate(data))
    assert math.isnan(bank["loss"].last or 0.0) and bank["grad_norm"].last == INF
    assert bank["tokens_per_s_per_gpu"].count == 0  # null: a gap
    assert bank["rl_staleness"].last == sys.float_info.max
    assert bank["rl_reward"].last == -INF and "loss" in bank
