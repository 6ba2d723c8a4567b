"""A reference run beside this one (`Reference`, `inspect_plot.aligned`, `inspect_ref`):
two runs with different step sizes aligned by tokens seen, by step and by time, on the
inspector and on the small charts; the reference's memory bound; the bank's hidden
step/tokens series kept out of the charts and the metric picker."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from ito_tui.contract import TelemetrySample, make_event
from ito_tui.state import METRICS, RunTracker
from ito_tui.state.inspect import (
    MAX_REF_POINTS,
    Point,
    Reference,
    Viewport,
    inspector_view,
)
from ito_tui.state.inspect_plot import aligned
from ito_tui.state.inspect_points import AXES, MAX_REF_KEYS, thin

from .sequence import RUN_ID, T0, telemetry_data

T = 1_780_000_000.0
M = 1_048_576


def loss_at(tokens: float) -> float:
    """Both runs learn the same curve per token: aligned by tokens, they coincide."""
    return 10.0 - tokens / (20 * M)


def overlap(a_lo: float | None, a_hi: float | None, b_lo: float | None, b_hi: float | None) -> bool:
    """Whether two bands (all four ends known) overlap, to rounding."""
    if a_lo is None or a_hi is None or b_lo is None or b_hi is None:
        return False
    return a_lo <= b_hi + 1e-9 and b_lo <= a_hi + 1e-9


def ours() -> list[Point]:
    """1M tokens a step, steps 1..100, one second apart."""
    return [Point(s, s, s * M, T + s, loss_at(s * M)) for s in range(1, 101)]


def reference_points() -> list[Point]:
    """2M tokens a step (twice the batch), steps 1..50, three seconds apart, a day before."""
    return [Point(s, s, 2 * s * M, T - 86_400 + 3 * s, loss_at(2 * s * M)) for s in range(1, 51)]


def test_aligned_by_tokens_puts_the_reference_where_we_had_seen_as_many_tokens() -> None:
    pairs = aligned(reference_points(), ours(), "step", "tokens")
    assert [x for x, _ in pairs[:3]] == pytest.approx([2.0, 4.0, 6.0])  # our step at 2M, 4M…
    by_step = aligned(reference_points(), ours(), "step", "step")
    assert [x for x, _ in by_step[:3]] == [1.0, 2.0, 3.0]
    by_time = aligned(reference_points(), ours(), "time", "time")
    assert by_time[0][0] == pytest.approx(T + 1)  # shifted to our start
    assert by_time[1][0] - by_time[0][0] == pytest.approx(3.0)
    on_steps_by_time = aligned(reference_points(), ours(), "step", "time")
    assert [x for x, _ in on_steps_by_time[:2]] == pytest.approx([1.0, 4.0])  # 0 s, 3 s in


def test_the_inspector_draws_two_runs_with_different_step_sizes_on_one_curve_by_tokens() -> None:
    for axis in AXES[:2]:  # step, tokens
        v = inspector_view(
            ours(),
            reference_points(),
            (),
            Viewport(axis=axis),
            25,
            key="loss",
            label="loss",
            unit="number",
            ref_label="run_prev",
        )
        assert v.ref_label == "run_prev (by tokens)"
        assert v.ref_columns is not None
        for mine, theirs in zip(v.columns, v.ref_columns, strict=True):
            assert mine is not None and theirs is not None
            assert None not in (theirs.lo, theirs.hi, mine.lo, mine.hi)
            # The same curve: each column's bands overlap.
            assert overlap(theirs.lo, theirs.hi, mine.lo, mine.hi)
        assert v.readout is not None and v.readout.diff == pytest.approx(0.0, abs=1e-9)
    # By step the reference is ahead on the curve: it saw twice the tokens at each step.
    by_step = inspector_view(
        ours(), reference_points(), (), Viewport(cursor=10), 25,
        key="loss", label="loss", unit="number", ref_by="step",
    )  # fmt: skip
    assert by_step.readout is not None and by_step.readout.diff is not None
    assert by_step.readout.diff > 0.5
    assert by_step.ref_columns is not None and by_step.ref_columns[-1] is None  # it ended at 50


def test_a_reference_keeps_at_most_its_bound_and_keeps_spikes_and_nans() -> None:
    many = [Point(i, i, i, T + i, 1.0) for i in range(1, 10_001)]
    many[5000] = many[5000]._replace(value=50.0)
    many[7000] = many[7000]._replace(value=-3.0)
    many[9000] = many[9000]._replace(value=math.nan)
    ref = Reference("run_prev", "prev", {"loss": tuple(many), "x": tuple(many[:10])})
    kept = ref.get("loss")
    assert len(kept) <= MAX_REF_POINTS
    values = [p.value for p in kept]
    assert 50.0 in values and -3.0 in values and any(math.isnan(v) for v in values)
    assert [p.seq for p in kept] == sorted(p.seq for p in kept)
    assert len(ref.get("x")) == 10 and ref.get("absent") == ()
    assert len(thin(many, 30)) <= 30
    wide = Reference("r", "r", {f"k{i}": (many[0],) for i in range(500)})
    assert len(wide.points) == MAX_REF_KEYS


def test_reference_of_telemetry_samples_reads_every_key() -> None:
    samples = [TelemetrySample.model_validate(telemetry_data(s, s * 10)) for s in range(1, 4)]
    ref = Reference.of("run_prev", "prev", samples, ["loss", "spend_usd"])
    assert [p.step for p in ref.get("loss")] == [10, 20, 30]
    assert [p.value for p in ref.get("spend_usd")] == [1.5, 3.0, 4.5]


def feed(tracker: RunTracker, seq: int, step: int, tokens_per_step: int, loss: float) -> None:
    data = {**telemetry_data(seq, step, loss=loss), "tokens_seen": step * tokens_per_step}
    tracker.feed(
        make_event("telemetry", seq=seq, run_id=RUN_ID, ts=T0 + timedelta(seconds=seq), data=data)
    )


def test_the_small_charts_draw_the_reference_aligned_by_tokens() -> None:
    tracker = RunTracker(RUN_ID)
    for s in range(1, 101):
        feed(tracker, s, s, M, loss_at(s * M))
    ref_samples = [
        TelemetrySample.model_validate(
            {**telemetry_data(s, s, loss=loss_at(2 * s * M)), "tokens_seen": 2 * s * M}
        )
        for s in range(1, 41)
    ]
    ref = Reference.of("run_prev", "run_prev", ref_samples, ["loss"])
    chart = tracker.chart("loss", 20, None, reference=ref)
    assert chart.ref_label == "run_prev (by tokens)"
    assert len(chart.ref_lows) == len(chart.ref_highs) == 20
    for c in range(16):  # the reference's 80M tokens cover our first 80 steps
        assert overlap(chart.ref_lows[c], chart.ref_highs[c], chart.lows[c], chart.highs[c])
    assert chart.ref_lows[-1] is None  # beyond the reference's tokens: nothing
    assert chart.ref_value is None  # it never saw our 100M tokens
    by_step = tracker.chart("loss", 20, None, reference=ref, by="step")
    assert by_step.ref_label == "run_prev (by step)"
    assert (by_step.ref_lows[0] or 0.0) < (chart.lows[0] or 0.0)
    by_time = tracker.chart("loss", 20, None, reference=ref, by="time")
    assert by_time.ref_lows[0] is not None
    # Without a reference nothing changes for the callers of old.
    plain = tracker.chart("loss", 20, None)
    assert (plain.ref_lows, plain.ref_highs) == ((), ())
    assert (plain.ref_value, plain.ref_label) == (None, None)
    assert plain.lows == chart.lows
    # A key the reference lacks: an empty overlay, still labelled.
    other = tracker.chart("mfu", 20, None, reference=ref)
    assert other.ref_lows == (None,) * 20 and other.ref_label == "run_prev (by tokens)"


def test_the_hidden_step_and_tokens_series_are_neither_charts_nor_metrics() -> None:
    tracker = RunTracker(RUN_ID)
    for s in range(1, 6):
        feed(tracker, s, s * 10, M, 2.0)
    bank = tracker.bank
    assert bank.hidden["step"].last == 50.0 and bank.hidden["tokens_seen"].last == 50 * M
    assert "step" not in bank and "tokens_seen" not in bank
    assert bank.metric_names() == []
    assert {m.key for m in METRICS}.isdisjoint(bank.hidden)
    with pytest.raises(KeyError):
        bank["tokens_seen"]
    bound = sum(s.max_nbytes() for s in (*bank.series.values(), *bank.hidden.values()))
    assert bank.nbytes() <= bound


def test_the_overlay_is_drawn_again_for_a_new_sample_or_another_reference() -> None:
    tracker = RunTracker(RUN_ID)
    for s in range(1, 21):
        feed(tracker, s, s, M, loss_at(s * M))
    ref = Reference("a", "a", {"loss": tuple(reference_points())})
    first = tracker.chart("loss", 10, None, reference=ref)
    assert tracker.chart("loss", 10, None, reference=ref) == first  # nothing new: the same
    feed(tracker, 21, 21, M, loss_at(21 * M))
    grown = tracker.chart("loss", 10, None, reference=ref)
    assert grown.ref_value == pytest.approx(loss_at(21 * M))  # where we are now
    assert grown.ref_value != first.ref_value
    flat = Reference("b", "b", {"loss": tuple(p._replace(value=7.0) for p in reference_points())})
    other = tracker.chart("loss", 10, None, reference=flat)
    assert other.ref_lows == (7.0,) * 10 and other.ref_label == "b (by tokens)"


def test_by_step_the_small_charts_match_the_current_stage_only() -> None:
    tracker = RunTracker(RUN_ID)
    for s in range(1, 21):
        feed(tracker, s, s, M, 3.0)
    for s in range(1, 21):  # SFT: steps from 0 again
        data = {**telemetry_data(20 + s, s, stage="sft", loss=1.0), "tokens_seen": (20 + s) * M}
        tracker.feed(
            make_event(
                "telemetry", seq=20 + s, run_id=RUN_ID, ts=T0 + timedelta(seconds=20 + s),
                data=data,
            )
        )  # fmt: skip
    ref = Reference(
        "prev",
        "prev",
        {
            "loss": (
                *(Point(s, s, s * M, T + s, 30.0, "pretrain") for s in range(1, 21)),
                *(Point(20 + s, s, (20 + s) * M, T + 20 + s, 10.0, "sft") for s in range(1, 21)),
            )
        },
    )
    by_step = tracker.chart("loss", 10, None, reference=ref, by="step")
    assert by_step.ref_lows[:4] == (None,) * 4  # pretrain's columns: not this stage's steps
    assert set(by_step.ref_lows[6:]) == {10.0}  # SFT against the reference's SFT
    assert by_step.ref_value == 10.0
    by_tokens = tracker.chart("loss", 10, None, reference=ref)
    assert by_tokens.ref_lows[0] == 30.0 and by_tokens.ref_lows[-1] == 10.0
