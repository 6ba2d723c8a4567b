"""projection: finish and spend p50/p90 from the pace the run measured (stalls, rollbacks
and all), against the booking's end and the budget; the words are format.py's."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.contract import make_event
from ito_tui.state import RunTracker
from ito_tui.state.pace import Pace

from .sequence import RUN_ID, T0, telemetry_data

TOTAL = 1000


def tracker_with(
    points: list[tuple[float, int]],
    *,
    usd_per_s: float = 1.0,
    estimate: dict[str, Any] | None = None,
    total: int = TOTAL,
) -> RunTracker:
    """A pretraining run whose telemetry said step `step` at `t` seconds after T0."""
    tracker = RunTracker(RUN_ID)
    seq = 1
    tracker.feed(
        make_event(
            "stage.started",
            seq=seq,
            run_id=RUN_ID,
            ts=T0,
            sim_ts=T0,
            data={"stage": "pretrain", "total_steps": total},
        )
    )
    if estimate is not None:
        tracker.state = tracker.state.evolve(estimate=estimate_model(estimate))
    for t, step in points:
        seq += 1
        at = T0 + timedelta(seconds=t)
        data = {**telemetry_data(seq, step), "ts": at.isoformat(), "spend_usd": f"{t * usd_per_s}"}
        tracker.feed(make_event("telemetry", seq=seq, run_id=RUN_ID, ts=at, sim_ts=at, data=data))
    return tracker


def estimate_model(stages: dict[str, Any]) -> Any:
    from ito_tui.contract import Estimate

    return Estimate.model_validate(
        {
            "stages": [
                {"stage": k, "tokens": 1, "gpu_hours": 1, "wall_clock_h": h, "usd": "1"}
                for k, h in stages.items()
            ],
            "total_gpu_hours": 1,
            "wall_clock_h_p50": 1,
            "wall_clock_h_p90": 1,
            "usd_p50": "1",
            "usd_p90": "1",
            "fits_budget": True,
            "fits_booking_window": True,
            "expected_interruptions": 0,
        }
    )


STEADY = [(60.0 * i, 10 * i) for i in range(0, 21)]  # 10 steps a minute, to step 200 at 20 min


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_steady_pace_projects_the_remaining_steps_and_the_spend() -> None:
    proj = tracker_with(STEADY).projection(booking_ends_at=None, budget_usd=None)
    # 800 steps left at 6 s a step, no variation: p50 = p90.
    assert proj.remaining_s_p50 == pytest.approx(4800)
    assert proj.finish_p50 == at(1200 + 4800) and proj.finish_p90 == proj.finish_p50
    assert proj.spend_p50 == Decimal("6000.0") and proj.spend_p90 == Decimal("6000.0")
    assert proj.measured_s == 1200 and not proj.late and not proj.over and proj.warning == ""
    assert proj.words == "finish ~01:40 UTC (p90 01:40 UTC) · spend ~$6.0K (p90 $6.0K)"


def test_stalls_and_rollbacks_are_measured_goodput_and_widen_the_p90() -> None:
    # The same 200 steps, with a 10-minute stall and a rollback of 20 steps on the way.
    bumpy = [(0, 0), (60, 10), (120, 20), (720, 20), (780, 30), (840, 10), (900, 40)]
    bumpy += [(900 + 60 * i, 40 + 10 * i) for i in range(1, 17)]
    proj = tracker_with(bumpy).projection(booking_ends_at=None, budget_usd=None)
    steady = tracker_with(STEADY).projection(booking_ends_at=None, budget_usd=None)
    assert proj.remaining_s_p50 is not None and steady.remaining_s_p50 is not None
    assert proj.remaining_s_p90 is not None
    # Slower than the steady run's pace (the stall and the lost steps count, the older
    # fading), and less sure.
    assert proj.remaining_s_p50 > steady.remaining_s_p50 * 1.1
    assert proj.remaining_s_p90 > proj.remaining_s_p50 * 1.1


def test_the_p90_past_the_booking_end_or_over_the_budget_warns() -> None:
    tracker = tracker_with(STEADY)
    ends = at(1200 + 4800)
    fine = tracker.projection(booking_ends_at=ends + timedelta(minutes=1), budget_usd=None)
    assert not fine.late
    late = tracker.projection(booking_ends_at=ends - timedelta(minutes=1), budget_usd=None)
    assert late.late and late.warning == "⚠ p90 past booking end"
    over = tracker.projection(booking_ends_at=None, budget_usd=Decimal("5999"))
    assert over.over and over.warning == "⚠ p90 over budget"
    both = tracker.projection(booking_ends_at=ends - timedelta(1), budget_usd=Decimal(1))
    assert both.warning == "⚠ p90 past booking end · ⚠ p90 over budget"


def test_a_run_like_the_one_in_the_issue_warns_before_the_booking_ends() -> None:
    # 4d12h in, a booking ending in 13d19h, throughput that dips now and then: the p90
    # says it will not make it, where the backend's ETA alone said nothing.
    day = 86_400.0
    points = []
    step = 0
    for i in range(0, 109):  # hourly samples over 4.5 days
        step += 25 if i % 6 else 5  # every sixth hour a slow one (checkpoints, a restart)
        points.append((i * 3600.0, step))
    tracker = tracker_with(points, total=9_300, usd_per_s=0.05)
    ends = at(4.5 * day + 13 * day + 19 * 3600)
    proj = tracker.projection(booking_ends_at=ends, budget_usd=Decimal(90_000))
    assert proj.finish_p50 is not None and proj.finish_p50 < ends
    assert proj.late and proj.finish_p90 is not None and proj.finish_p90 > ends


def test_the_measured_pace_wins_over_the_estimate_and_scales_later_stages() -> None:
    est = {"pretrain": 0.5, "mid_train": 2.0}  # pre-flight: pretraining takes half an hour
    proj = tracker_with(STEADY, estimate=est).projection(booking_ends_at=None, budget_usd=None)
    # Measured: 6,000 s for the whole of pretraining = 3.33× the estimate; mid-train's
    # 2 h estimate is scaled alike.
    assert proj.remaining_s_p50 == pytest.approx(4800 + 2 * 3600 * 6000 / 1800)


def test_a_stall_going_on_now_pushes_the_finish_out() -> None:
    tracker = tracker_with(STEADY)
    soon = tracker.projection(now=at(1200))
    later = tracker.projection(now=at(1200 + 3600))
    assert soon.finish_p50 is not None and later.finish_p50 is not None
    assert later.finish_p50 - soon.finish_p50 > timedelta(hours=1)


def test_a_clock_ahead_of_the_pace_by_less_than_an_interval_moves_nothing() -> None:
    # The run's clock is the newest event's: one of the next quantum (a checkpoint) is
    # often heard before the telemetry that says its step. The demo's finish jumped from
    # Dec 10 to Dec 14 and back at every such event (and raised "Will finish late").
    tracker = tracker_with(STEADY)
    now = tracker.projection(now=at(1200))
    ahead = tracker.projection(now=at(1200 + 59))  # the next point is due at 1260
    assert now.known and ahead.known
    assert (ahead.finish_p50, ahead.finish_p90) == (now.finish_p50, now.finish_p90)
    assert (ahead.spend_p50, ahead.spend_p90) == (now.spend_p50, now.spend_p90)
    # Overdue, it is a stall going on: it counts from when the point was due.
    stalled = tracker.projection(now=at(1200 + 60 + 600))
    assert stalled.finish_p50 is not None and now.finish_p50 is not None
    assert stalled.finish_p50 - now.finish_p50 > timedelta(minutes=10)


def test_no_projection_before_the_pace_is_measured_or_after_the_end() -> None:
    assert not tracker_with([]).projection().known
    one = tracker_with([(0, 0), (60, 10)]).projection()
    assert not one.known and one.words == "finish — (measuring the pace)"
    tracker = tracker_with(STEADY)
    tracker.feed(make_event("run.completed", seq=99, run_id=RUN_ID, ts=at(1300), data={}))
    assert not tracker.projection().known and tracker.projection().words == ""


def test_a_pace_too_slow_to_finish_says_so_and_is_late() -> None:
    crawl = [(0.0, 0), (86_400.0 * 400, 1), (86_400.0 * 800, 2)]
    proj = tracker_with(crawl, total=10**6).projection(booking_ends_at=at(86_400 * 900))
    assert proj.finish_p50 is None and proj.late
    assert proj.words.startswith("finish not in sight")


def test_the_pace_is_bounded_and_keeps_the_whole_stage_span() -> None:
    pace = Pace(cap=16)
    for i in range(10_000):
        pace.add("pretrain", float(i), i, 0.0)
    pts = pace.points()
    assert len(pace) <= 16 and pts[0].x == 0.0 and pts[-1].x == 9999.0
    pace.add("sft", 10_000.0, 0, 0.0)
    assert [p.x for p in pace.points()] == [10_000.0]


def test_the_pace_is_the_events_clock_not_the_samples_own_ts() -> None:
    # desk_sim's samples carry the wall clock (frozen within a burst) in `ts`; the run's
    # clock is the envelope's sim_ts. Measured on the wrong one, this run would never end.
    tracker = RunTracker(RUN_ID)
    tracker.feed(
        make_event(
            "stage.started",
            seq=1,
            run_id=RUN_ID,
            ts=T0,
            sim_ts=T0,
            data={"stage": "pretrain", "total_steps": TOTAL},
        )
    )
    for i, (t, step) in enumerate(STEADY, start=2):
        data = {**telemetry_data(i, step), "ts": T0.isoformat(), "spend_usd": f"{t}"}
        tracker.feed(make_event("telemetry", seq=i, run_id=RUN_ID, ts=T0, sim_ts=at(t), data=data))
    assert tracker.clock == at(1200)
    assert tracker.projection().remaining_s_p50 == pytest.approx(4800)
    # A backfill (no sim_ts) rebuilds the bank but keeps the pace measured live.
    tracker.backfill([])
    assert tracker.projection().remaining_s_p50 == pytest.approx(4800)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1e6), st.integers(-50, 500), st.floats(0, 1e4)),
        min_size=0,
        max_size=40,
    ),
    st.integers(1, 10**7),
)
def test_any_measured_history_gives_an_ordered_projection_or_none(
    steps: list[tuple[float, int, float]], total: int
) -> None:
    tracker = RunTracker(RUN_ID)
    tracker.feed(
        make_event(
            "stage.started",
            seq=1,
            run_id=RUN_ID,
            ts=T0,
            sim_ts=T0,
            data={"stage": "pretrain", "total_steps": total},
        )
    )
    t, step, spend = 0.0, 0, 0.0
    for i, (dt, dstep, dspend) in enumerate(steps, start=2):
        t, step, spend = t + dt, max(0, step + dstep), spend + dspend
        data = {**telemetry_data(i, step), "spend_usd": f"{spend:.2f}"}
        tracker.feed(
            make_event("telemetry", seq=i, run_id=RUN_ID, ts=at(t), sim_ts=at(t), data=data)
        )
    proj = tracker.projection(booking_ends_at=at(86_400), budget_usd=Decimal(1000))
    assert proj.words
    if proj.known:
        assert proj.remaining_s_p90 is not None and proj.remaining_s_p50 is not None
        assert proj.remaining_s_p90 >= proj.remaining_s_p50 >= 0
        if proj.finish_p50 is not None and proj.finish_p90 is not None:
            assert proj.finish_p90 >= proj.finish_p50
        if proj.spend_p50 is not None and proj.spend_p90 is not None:
            assert proj.spend_p90 >= proj.spend_p50


def test_later_stages_widen_the_p90_as_much_as_this_one() -> None:
    bumpy = [(0, 0), (60, 10), (120, 20), (720, 20), (780, 30), (840, 40), (900, 50)]
    alone = tracker_with(bumpy).projection()
    est = {"pretrain": 1.0, "sft": 1.0}
    with_later = tracker_with(bumpy, estimate=est).projection()
    assert alone.remaining_s_p50 and alone.remaining_s_p90 and with_later.stage_remaining_s
    assert with_later.remaining_s_p50 and with_later.remaining_s_p90
    spread = alone.remaining_s_p90 / alone.remaining_s_p50
    assert with_later.stage_remaining_s == pytest.approx(alone.remaining_s_p50)
    assert with_later.remaining_s_p90 / with_later.remaining_s_p50 == pytest.approx(spread)


def test_a_pace_that_changed_is_the_pace_to_come() -> None:
    # 10 steps a minute to step 100, then a node throttles: 5 a minute (desk_sim's budget
    # squeeze). At step 250, 750 steps are left at 12 s: 9,000 s. The whole stage's mean
    # (9.6 s a step) would say 7,200 s; recent intervals weigh more.
    points = [(60.0 * i, 10 * i) for i in range(11)]
    points += [(600.0 + 60 * i, 100 + 5 * i) for i in range(1, 31)]
    proj = tracker_with(points).projection()
    assert proj.remaining_s_p50 == pytest.approx(9000, rel=0.1)


def test_throughput_and_goodput_are_measured_apart() -> None:
    # A 10-minute stall early, then 50 minutes at 10 steps a minute: the running pace is
    # the steady 6 s a step; the stall is badput that still says how often they come.
    points = [(0.0, 0), (60.0, 10), (660.0, 20)]
    points += [(660.0 + 60 * i, 20 + 10 * i) for i in range(1, 51)]
    proj = tracker_with(points).projection()
    span = 660.0 + 3000
    assert proj.goodput_frac == pytest.approx(1 - 540 / span)
    assert proj.remaining_s_p50 == pytest.approx((TOTAL - 520) * 6 / (1 - 540 / span))
    steady = tracker_with(STEADY).projection()
    assert steady.goodput_frac == 1.0 and proj.remaining_s_p90 and proj.remaining_s_p50
    assert proj.remaining_s_p90 > proj.remaining_s_p50  # how often they come is uncertain


def test_many_slow_intervals_are_a_new_pace_one_long_gap_an_interruption() -> None:
    # A node throttles to a quarter of the pace (4x slower: past the stall factor) for
    # 20 intervals: the pace to come, not badput. 1000 - 300 steps at 24 s = 16,800 s.
    points = [(60.0 * i, 10 * i) for i in range(21)]
    points += [(1200.0 + 240 * i, 200 + 10 * i) for i in range(1, 11)]
    slow = tracker_with(points).projection()
    assert slow.goodput_frac == 1.0
    assert slow.remaining_s_p50 == pytest.approx(700 * 24, rel=0.15)
    # The same 40 minutes as one gap (the run was down): an interruption, badput.
    gap = [*points[:21], (1200.0 + 2400, 300), (1200.0 + 2460, 310), (1200.0 + 2520, 320)]
    down = tracker_with(gap).projection()
    # 2,400 s for 100 steps that take 600 s: 1,800 s of the 3,720 s measured were lost.
    assert down.goodput_frac == pytest.approx(1 - 1800 / 3720)
    assert down.stage_remaining_s and down.remaining_s_p90
    assert down.remaining_s_p90 > down.stage_remaining_s
