"""The chart inspector's pure view (`state/inspect*.py`): bucketing with the points behind
each column, log-Y with values ≤ 0, TensorBoard's debiased EMA, NaN/±inf columns, ticks,
marks at their columns, the readout and a rewind drawn on the step axis."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from ito_tui.contract import TelemetrySample
from ito_tui.state.buckets import NAN_BIT, NEG_INF_BIT, POS_INF_BIT
from ito_tui.state.inspect import (
    InspectorView,
    Mark,
    Point,
    Viewport,
    XAxis,
    ema,
    inspector_view,
    merge_points,
    points_of,
)
from ito_tui.state.inspect_points import AXES
from ito_tui.state.inspect_ticks import tick_label, x_ticks, y_ticks

from .sequence import telemetry_data

T = 1_780_000_000.0  # 2026-05-28 UTC: any fixed time


def pt(seq: int, value: float, *, step: int | None = None, tokens: int | None = None) -> Point:
    step = seq * 10 if step is None else step
    return Point(seq, step, step * 1000 if tokens is None else tokens, T + seq, value)


def view(
    points: list[Point],
    width: int = 10,
    vp: Viewport | None = None,
    *,
    ref: list[Point] | None = None,
    marks: Sequence[Mark] = (),
    ref_label: str | None = None,
    ref_by: XAxis = "tokens",
) -> InspectorView:
    return inspector_view(
        points,
        ref,
        marks,
        vp or Viewport(),
        width,
        key="loss",
        label="loss",
        unit="number",
        ref_label=ref_label,
        ref_by=ref_by,
    )


def tensorboard_smooth(values: list[float], weight: float) -> list[float]:
    """TensorBoard's `classicSmoothing` (vz_line_chart2), written out independently."""
    if all(v == values[0] for v in values):
        return list(values)
    last, num_accum, out = 0.0, 0, []
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * weight + (1 - weight) * v
        num_accum += 1
        debias = 1 - weight**num_accum if weight != 1 else 1.0
        out.append(last / debias)
    return out


def test_points_of_reads_fixed_keys_and_open_metrics_and_skips_nulls() -> None:
    samples = [
        TelemetrySample.model_validate(
            {**telemetry_data(1, 10, loss=2.5), "metrics": {"lr": 3e-4}}
        ),
        TelemetrySample.model_validate({**telemetry_data(2, 20), "loss": None, "metrics": {}}),
        TelemetrySample.model_validate({**telemetry_data(3, 30), "loss": "NaN"}),
    ]
    loss = points_of(samples, "loss")
    assert [(p.seq, p.step, p.tokens) for p in loss] == [(1, 10, 10_485_760), (3, 30, 31_457_280)]
    assert loss[0].value == 2.5 and math.isnan(loss[1].value)
    assert loss[0].ts == samples[0].ts.timestamp()
    assert [p.value for p in points_of(samples, "lr")] == [3e-4]
    assert [p.value for p in points_of(samples, "spend_usd")] == [1.5, 3.0, 4.5]
    assert points_of(samples, "rl_reward") == []  # no RL block: gaps


def test_merge_points_keeps_each_seq_once_in_seq_order() -> None:
    coarse = [pt(1, 1.0), pt(5, 5.0)]
    fine = [pt(3, 3.0), pt(5, 5.5)]
    assert [(p.seq, p.value) for p in merge_points(coarse, fine)] == [
        (1, 1.0),
        (3, 3.0),
        (5, 5.5),
    ]


def test_bucketing_keeps_min_max_and_last_and_the_points_behind_them() -> None:
    values = [5.0, 1.0, 9.0, 4.0] * 5  # 20 points, 2 columns of 10
    v = view([pt(i + 1, y) for i, y in enumerate(values)], width=2)
    first, second = v.columns
    assert first is not None and second is not None
    assert (first.lo, first.hi, first.last) == (1.0, 9.0, 1.0)  # seqs 1..10: the 10th is 1.0
    assert first.count == 10 and first.first is not None and first.first.seq == 1
    assert first.low_point is not None and first.low_point.seq == 2
    assert first.high_point is not None and first.high_point.seq == 3
    assert second.last_point is not None and second.last_point.seq == 20
    assert (v.y_lo, v.y_hi) == (1.0, 9.0)
    assert v.readout is not None and v.readout.value == 4.0  # the cursor follows: last column
    assert (v.readout.lo, v.readout.hi, v.readout.step) == (1.0, 9.0, 200)
    assert v.readout.at == datetime.fromtimestamp(T + 20, UTC)
    assert v.readout.tokens == 200_000


def test_empty_columns_are_none_and_no_points_is_an_empty_view() -> None:
    v = view([pt(1, 1.0), pt(100, 2.0)], width=5)
    assert v.columns[1:4] == (None, None, None)
    # The cursor on an empty column reads the nearest point (its step says which).
    near = view([pt(1, 1.0), pt(100, 2.0)], width=5, vp=Viewport(cursor=1))
    assert near.readout is not None and (near.readout.value, near.readout.step) == (1.0, 10)
    near = view([pt(1, 1.0), pt(100, 2.0)], width=5, vp=Viewport(cursor=3))
    assert near.readout is not None and near.readout.step == 1000
    empty = view([], width=5)
    assert empty.columns == (None,) * 5 and empty.readout is None and empty.y_ticks == ()


def test_nan_and_inf_columns_are_marked_and_never_set_the_scale() -> None:
    v = view([pt(1, 2.0), pt(2, math.nan), pt(3, 3.0), pt(4, math.inf), pt(5, -math.inf)], 5)
    cols = v.columns
    assert cols[1] is not None and cols[1].odd == NAN_BIT and cols[1].lo is None
    assert cols[1].last is None and cols[1].last_point is not None
    assert cols[3] is not None and cols[3].odd == POS_INF_BIT
    assert cols[4] is not None and cols[4].odd == NEG_INF_BIT
    assert (v.y_lo, v.y_hi) == (2.0, 3.0)  # finite values only
    assert v.readout is not None and v.readout.value == -math.inf  # the readout says it
    assert v.notes[0] == "NaN at step 20 (+2 more non-finite)"


def test_log_y_leaves_out_zero_and_negative_values_and_counts_them() -> None:
    pts = [pt(1, 100.0), pt(2, 0.0), pt(3, -5.0), pt(4, 10.0), pt(5, 1.0), pt(6, 0.0)]
    v = view(pts, width=6, vp=Viewport(log_y=True))
    assert [c.last if c else None for c in v.columns] == [2.0, None, None, 1.0, 0.0, None]
    assert (v.y_lo, v.y_hi) == (0.0, 2.0)  # log10 of 1 and 100
    assert "3 values ≤ 0 not drawn (log)" in v.notes
    assert [label for _, label in v.y_ticks] == ["1", "10", "100"]
    assert v.readout is not None and v.readout.value == 0.0  # raw units, not log
    # Not log: the same points are all drawn, nothing noted.
    linear = view(pts, width=6)
    assert linear.y_lo == -5.0 and not linear.notes


def test_log_y_ticks_within_a_decade_are_nice_values_of_the_data() -> None:
    v = view([pt(1, 2.0), pt(2, 3.0)], width=4, vp=Viewport(log_y=True))
    assert [label for _, label in v.y_ticks] == ["2.0", "2.2", "2.4", "2.6", "2.8", "3.0"]
    assert v.y_ticks[0][0] == pytest.approx(math.log10(2))


def test_ema_matches_tensorboards_debiased_formula_on_a_known_series() -> None:
    values = [1.0, 3.0, 2.0, math.nan, 5.0, 4.0, math.inf, 0.5]
    for weight in (0.0, 0.6, 0.9, 0.99):
        got, want = ema(values, weight), tensorboard_smooth(values, weight)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert (math.isnan(g) and math.isnan(w)) or g == pytest.approx(w, rel=1e-12)
    # By hand: w=0.6, first value debiased to itself, then (0.6*0.4 + 0.4*3) / (1 - 0.36).
    smoothed = ema([1.0, 3.0], 0.6)
    assert smoothed[0] == pytest.approx(1.0)
    assert smoothed[1] == pytest.approx((0.6 * 0.4 + 0.4 * 3.0) / (1 - 0.6**2))
    assert ema([2.0, 2.0, 2.0], 0.9) == [2.0, 2.0, 2.0]  # constant: unchanged (TB #786)
    assert ema([], 0.9) == []


def test_smoothing_draws_the_ema_per_column_and_keeps_the_raw_columns() -> None:
    values = [1.0, 3.0, 2.0, 5.0]
    pts = [pt(i + 1, y) for i, y in enumerate(values)]
    v = view(pts, width=4, vp=Viewport(smoothing=2))  # 0.9
    assert v.smooth == pytest.approx(tensorboard_smooth(values, 0.9))
    assert [c.last if c else None for c in v.columns] == values
    assert view(pts, width=4).smooth is None
    # The reference is smoothed alike, on its own points.
    ref = [pt(i + 1, y + 1) for i, y in enumerate(values)]
    both = view(pts, width=4, vp=Viewport(smoothing=2), ref=ref, ref_by="step")
    assert both.ref_smooth == pytest.approx(tensorboard_smooth([v + 1 for v in values], 0.9))
    assert view(pts, width=4, ref=ref).ref_smooth is None


def test_a_rewind_on_the_step_axis_draws_both_branches_in_the_band() -> None:
    # Steps 10..90, a rollback to 50, then 50..90 again with a lower loss.
    first = [pt(i, 3.0, step=i * 10) for i in range(1, 10)]
    resumed = [pt(9 + i, 2.0, step=40 + i * 10) for i in range(1, 6)]
    v = view(first + resumed, width=9)
    col = v.columns[-1]  # step 90: ran twice
    assert col is not None and (col.lo, col.hi) == (2.0, 3.0)  # both branches
    assert col.last == 2.0 and col.last_point is not None and col.last_point.seq == 14
    early = v.columns[0]
    assert early is not None and (early.lo, early.hi) == (3.0, 3.0)  # ran once
    assert "steps 50–90 ran twice (rewind): the band holds both, the line the resumed run" in (
        v.notes
    )
    # On the time axis the two branches lie one after the other.
    timed = view(first + resumed, width=14, vp=Viewport(axis="time"))
    assert [c.last if c else None for c in timed.columns] == [3.0] * 9 + [2.0] * 5


def test_marks_land_in_their_columns_on_every_axis() -> None:
    pts = [pt(i, 1.0) for i in range(1, 101)]  # steps 10..1000, tokens 10K..1M
    marks = [
        Mark("fault", 500, T + 50, 500, None, "fault xid on n1 (f1)"),
        Mark("gate", 900, T + 90, None, None, "gate pretrain passed (g1)"),
        Mark("checkpoint", 10, T + 1, 10, 10_000, "checkpoint step 10 (c1)"),
        Mark("rewind", 2000, T + 200, 5000, None, "rewind"),  # beyond the data: not drawn
    ]
    for axis in AXES:
        v = view(pts, width=100, vp=Viewport(axis=axis), marks=marks)
        assert [(c, m.kind) for c, m in v.marks] == [
            (0, "checkpoint"),
            (49, "fault"),
            (89, "gate"),
        ], axis
    v = view(pts, width=100, vp=Viewport(cursor=49), marks=marks)
    assert v.readout is not None and [m.kind for m in v.readout.marks] == ["fault"]


def test_ticks_have_units_and_nice_values_and_times_their_date() -> None:
    assert [label for _, label in y_ticks(0.0, 1.0, "fraction", False)] == [
        "0%",
        "20%",
        "40%",
        "60%",
        "80%",
        "100%",
    ]
    assert [label for _, label in y_ticks(60.0, 80.0, "gib", False)][:2] == ["60 GiB", "65 GiB"]
    assert tick_label("number", 1_250_000.0, 250_000.0) == "1.25M"
    assert tick_label("number", 182_000.0, 1000.0) == "182K"
    assert tick_label("usd", 1500.0, 500.0) == "$1.5K"
    lr = [label for _, label in y_ticks(3e-5, 4e-5, "number", False)]
    assert lr == ["3e-05", "3.25e-05", "3.5e-05", "3.75e-05", "4e-05"]
    assert y_ticks(0.0, 1e308, "number", False)[-1][1] == "1e308"
    assert y_ticks(0.0, math.inf, "number", False) == ()  # no spacing counts that
    assert tick_label("number", 1e-323, 5e-324).endswith("e-324")  # subnormal: no 1/0
    # 16 digits with a spacing of 5,000: on the scale, to the unit, and one label each.
    huge = y_ticks(1972256132610000.0, 1972256132635000.0, "number", False, count=5)
    assert [v for v, _ in huge] == [1972256132610000.0]
    assert y_ticks(1972256132610000.0, 1972256132635000.0, "steps", False) == (
        (1972256132610000.0, "2e15 st"),
    )
    assert [v for v, _ in y_ticks(0.0, 1.0, "number", False)] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    steps = x_ticks(0.0, 200_000.0, 60, "step", datetime.fromtimestamp(T, UTC))
    assert [label for _, label in steps] == ["0", "50K", "100K", "150K", "200K"]
    assert steps[0][0] == 0 and steps[-1][0] == 59
    tokens = x_ticks(0.0, 2.4e9, 60, "tokens", datetime.fromtimestamp(T, UTC))
    assert [label for _, label in tokens] == ["0", "1B", "2B"]
    day = datetime(2026, 11, 30, 14, 0, tzinfo=UTC).timestamp()
    now = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
    times = x_ticks(day, day + 3 * 3600, 50, "time", now)
    assert [label for _, label in times] == [
        "Nov 30 14:00",
        "Nov 30 15:00",
        "Nov 30 16:00",
        "Nov 30 17:00",
    ]
    today = x_ticks(day, day + 3 * 3600, 50, "time", datetime(2026, 11, 30, 18, tzinfo=UTC))
    assert today[0][1] == "14:00"


def test_the_reference_is_drawn_on_the_same_x_and_the_readout_says_the_difference() -> None:
    ours = [pt(i, 3.0 - i * 0.1) for i in range(1, 11)]
    ref = [pt(i, 3.5 - i * 0.1) for i in range(1, 11)]
    v = view(ours, width=10, ref=ref, ref_label="run_prev", ref_by="step")
    assert v.ref_label == "run_prev (by step)"
    assert v.ref_columns is not None and v.ref_columns[-1] is not None
    assert v.readout is not None and v.readout.ref_value == pytest.approx(2.5)
    assert v.readout.diff == pytest.approx(-0.5)
    assert v.y_hi == pytest.approx(3.4)  # the reference is on the scale too
    assert view(ours, width=10).ref_columns is None


def test_a_cursor_move_redraws_only_the_readout_and_new_points_redraw_the_plot() -> None:
    pts = [pt(i, float(i)) for i in range(1, 21)]
    whole = view(pts, 10)
    moved = view(merge_points(pts), 10, Viewport(cursor=3))  # the same points, a new list
    assert moved.columns is whole.columns  # not bucketed again
    assert moved.cursor == 3 and moved.readout is not None and moved.readout.step == 80
    assert whole.readout is not None and whole.readout.step == 200
    grown = view([*pts, pt(21, 99.0)], 10, Viewport(cursor=3))
    assert grown.columns is not whole.columns and grown.y_hi == 99.0
    assert view(pts, 10, Viewport(cursor=3, log_y=True)).y_hi == pytest.approx(math.log10(20))


def test_the_readout_interpolates_a_coarser_reference_between_its_columns() -> None:
    ours = [pt(i, 1.0) for i in range(1, 101)]
    coarse = [pt(1, 2.0), pt(100, 4.0)]  # two points: every column between is empty
    v = view(ours, 11, Viewport(cursor=5), ref=coarse, ref_by="step")
    assert v.ref_columns is not None and v.ref_columns[5] is None
    assert v.readout is not None and v.readout.ref_value == pytest.approx(3.0)
    assert v.readout.diff == pytest.approx(-2.0)


def test_a_rewind_between_two_samples_is_noted_from_its_mark() -> None:
    # Sampled every 250 steps: the rollback to 1,100 resumes with a sample at 1,250 again.
    first = [pt(i, 3.0, step=i * 250) for i in range(1, 6)]  # 250..1,250
    resumed = [pt(6, 2.9, step=1250), pt(7, 2.8, step=1500)]
    rewind = Mark("rewind", 6, T + 5.5, 1100, None, "rewind 1,250→1,100")
    v = view(first + resumed, width=6, marks=[rewind])
    assert v.notes[0].startswith("steps 1,100–1,250 ran twice (rewind): the band holds both")
    col = v.columns[4]  # step 1,250: both samples
    assert col is not None and (col.lo, col.hi, col.last, col.count) == (2.9, 3.0, 2.9, 2)
    assert view(first + resumed, width=6).notes[0].startswith("step 1,250 ran twice")


def test_the_step_axis_shows_one_stage_and_tokens_show_the_run() -> None:
    pre = [Point(i, i * 10, i * 10_000, T + i, 3.0, "pretrain") for i in range(1, 11)]
    sft = [Point(10 + i, i, 100_000 + i * 100, T + 10 + i, 1.5, "sft") for i in range(1, 6)]
    marks = [
        Mark("checkpoint", 5, T + 5, 50, None, "checkpoint step 50 (c1)"),
        Mark("checkpoint", 14, T + 14, 4, None, "checkpoint step 4 (c2)"),
    ]
    v = inspector_view(
        pre + sft, None, marks, Viewport(), 5, key="loss", label="loss", unit="number",
        stage="sft",
    )  # fmt: skip
    assert v.stage == "sft" and (v.x_min, v.x_max) == (1.0, 5.0)
    assert v.notes == ("SFT steps (x: tokens or time for the whole run)",)  # no "rewind"
    assert [m.label for _, m in v.marks] == ["checkpoint step 4 (c2)"]
    main = view(pre + sft, width=10, marks=marks)  # by default: the stage most points are of
    assert main.stage == "pretrain" and main.x_max == 100.0
    assert [m.label for _, m in main.marks] == ["checkpoint step 50 (c1)"]
    assert main.notes == ("pretrain steps (x: tokens or time for the whole run)",)
    assert view([*pre[:3], *sft], width=5).stage == "sft"
    tokens = view(pre + sft, width=5, vp=Viewport(axis="tokens"), marks=marks)
    assert tokens.stage is None and tokens.x_max == 100_500.0 and not tokens.notes
    one = view(pre, width=5)
    assert one.stage is None and not one.notes
