"""Silence on the backend's clock: events without progress, and no events at all."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from ito_tui.alerting.silence import CADENCE_FACTOR, DUE_SLACK_S, SilenceClock, next_due
from ito_tui.contract import EventBase, make_event

T0 = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
PROGRESS = {"stage": "pretrain", "progress": {"step": 1, "total_steps": 100, "frac": 0.01}}


def event(type_: str, wall_s: float, sim_s: float | None, seq: int = 1) -> EventBase:
    data: dict[str, Any] = PROGRESS if type_ == "stage.progress" else {}
    sim_ts = None if sim_s is None else (T0 + timedelta(seconds=sim_s)).isoformat()
    return make_event(
        type_, seq=seq, run_id="run_1", ts=(T0 + timedelta(seconds=wall_s)).isoformat(),
        sim_ts=sim_ts, data=data, stage="pretrain",
    )  # fmt: skip


def feed(clock: SilenceClock, ev: EventBase, now: float, state: str = "running") -> bool:
    return clock.observe(ev, now, state=state, stage="pretrain")


def test_events_without_progress_are_one_silent_spell_per_stall() -> None:
    clock = SilenceClock(600.0, now=0.0)
    for i in range(3):  # progress every 10 simulated seconds: the run's pace
        assert not feed(clock, event("stage.progress", i / 10, 10.0 * i), i / 10)
    # Then other events go on (1 simulated minute and 1 s each); no progress.
    spells = [feed(clock, event("x.quiet", i, 20 + 60.0 * i), float(i)) for i in range(1, 20)]
    assert spells.count(True) == 1 and spells.index(True) == 9  # at 600 s, once
    assert not feed(clock, event("stage.progress", 20, 1220), 20.0)  # the spell ends
    again = [
        feed(clock, event("x.quiet", i, 1220 + 60.0 * (i - 20)), float(i)) for i in range(21, 32)
    ]
    assert again.count(True) == 1


def test_no_events_at_all_is_silence_on_the_extrapolated_clock() -> None:
    # The backend's clock runs 60 simulated seconds per second (sim_ts against ts).
    clock = SilenceClock(600.0, now=100.0)
    for i in range(3):
        assert not feed(clock, event("stage.progress", 2.0 * i, 120.0 * i), 100.0 + 2 * i)
    assert clock.rate == 60.0
    # Then nothing but heartbeats: 9 s later 540 simulated seconds passed; 10 s, 600.
    assert not clock.check(113.0, state="running", stage="pretrain", live=True)
    assert not clock.check(115.0, state="running", stage="pretrain", live=False)  # not live
    assert clock.check(114.0, state="running", stage="pretrain", live=True)
    assert not clock.check(200.0, state="running", stage="pretrain", live=True)  # once
    assert clock.silent_for(114.0) == 600.0


def test_without_sim_ts_the_wall_clock_counts() -> None:
    clock = SilenceClock(600.0, now=0.0)
    assert not feed(clock, event("telemetry_like", 0, None), 0.0)
    assert not feed(clock, event("stage.progress", 1, None), 1.0)
    assert clock.rate == 1.0
    assert not clock.check(600.0, state="running", stage="pretrain", live=True)
    assert clock.check(601.0, state="running", stage="pretrain", live=True)


def test_a_run_that_is_not_training_is_never_silent() -> None:
    for state in ("awaiting_approval", "recovering", "gate_eval"):
        clock = SilenceClock(600.0, now=0.0)
        feed(clock, event("stage.progress", 0, 0), 0.0)
        assert not feed(clock, event("x.quiet", 1, 3600), 1.0, state=state)
        assert not clock.check(1e6, state=state, stage="pretrain", live=True)
    # A stage that never progressed (data prep) cannot stall either.
    clock = SilenceClock(600.0, now=0.0)
    assert not feed(clock, event("x.quiet", 1, 3600), 1.0)
    feed(clock, event("stage.progress", 2, 3700), 2.0)
    assert not clock.observe(event("x.quiet", 3, 9999), 3.0, state="running", stage="mid_train")


def test_a_state_change_restarts_the_count() -> None:
    clock = SilenceClock(600.0, now=0.0)
    feed(clock, event("stage.progress", 0, 0), 0.0)
    # An hour awaiting a decision, then running again: not silent for that hour.
    assert not feed(clock, event("run.state_changed_like", 1, 3000), 1.0, state="awaiting_approval")
    changed = make_event(
        "run.state_changed", seq=3, run_id="run_1", ts=(T0 + timedelta(seconds=2)).isoformat(),
        sim_ts=(T0 + timedelta(seconds=3600)).isoformat(),
        data={"from_state": "awaiting_approval", "to_state": "running"},
    )  # fmt: skip
    assert not feed(clock, changed, 2.0)
    assert not feed(clock, event("x.quiet", 3, 3900), 3.0)
    assert feed(clock, event("x.quiet", 4, 4200), 4.0)


def test_a_fast_demo_clock_needs_local_seconds_of_silence_too() -> None:
    # At 300,000x ten simulated minutes pass in 2 ms: a gap between two progress events
    # (or the client drawing) is not a silent run until 2 local seconds have passed too.
    clock = SilenceClock(600.0, now=0.0)
    for i in range(3):
        assert not feed(clock, event("stage.progress", i / 1000, i), i / 1000)
    assert not feed(clock, event("x.quiet", 0.004, 720.0), 0.004)
    assert not clock.check(1.9, state="running", stage="pretrain", live=True)
    assert feed(clock, event("x.quiet", 2.1, 6e5), 2.1)  # 2 s and 10 min: silent


def test_a_demo_that_reports_once_per_tick_is_silent_only_when_ticks_pass_without_progress() -> (
    None
):
    # desk_sim at 2,000x: one tick every 2.2 s is 74 simulated minutes; a checkpoint of a
    # tick arrives just before that tick's telemetry (the showcase's seq 13-19).
    tick, sim_tick = 2.2, 74 * 60.0
    clock = SilenceClock(600.0, now=0.0)
    started = make_event(
        "stage.started", seq=1, run_id="run_1", ts=T0.isoformat(), sim_ts=T0.isoformat(),
        data={"stage": "pretrain"}, stage="pretrain",
    )  # fmt: skip
    assert not clock.observe(started, 0.0, state="running", stage="pretrain")
    for n in range(1, 6):
        at, sim = n * tick, n * sim_tick
        assert not feed(clock, event("x.checkpoint", at, sim), at)
        assert not feed(clock, event("stage.progress", at, sim), at)
    # Then the ticks go on without progress (a hang): silent once 3 ticks passed, once.
    spells = [feed(clock, event("x.checkpoint", n * tick, n * sim_tick), n * tick)
              for n in range(6, 12)]  # fmt: skip
    assert spells == [False, False, True, False, False, False]


def test_due_is_when_a_check_with_no_event_since_first_starts_the_spell() -> None:
    clock = SilenceClock(600.0, now=100.0)
    assert clock.due() is None  # nothing measured yet
    for i in range(3):  # 60 simulated seconds per second, as above
        feed(clock, event("stage.progress", 2.0 * i, 120.0 * i), 100.0 + 2 * i)
    due = clock.due()
    assert due == 114.0  # 600 simulated seconds after the last progress (at 104.0)
    assert not clock.check(due - 0.01, state="running", stage="pretrain", live=True)
    assert clock.check(due + DUE_SLACK_S, state="running", stage="pretrain", live=True)
    assert clock.due() is None  # in a spell: nothing more is due until progress
    # A fast demo clock: three of the run's ticks (a local second each) are what is due.
    fast = SilenceClock(600.0, now=0.0)
    for i in range(3):
        feed(fast, event("stage.progress", 1.0 * i, 3600.0 * i), 1.0 * i)
    due = fast.due()
    assert due == 2.0 + CADENCE_FACTOR * 1.0
    assert not fast.check(due - 0.01, state="running", stage="pretrain", live=True)
    assert fast.check(due + DUE_SLACK_S, state="running", stage="pretrain", live=True)


def test_the_next_check_is_the_earliest_due_still_to_come() -> None:
    soon, later, idle = (SilenceClock(600.0, now=0.0) for _ in range(3))
    feed(soon, event("stage.progress", 0, None), 0.0)
    feed(later, event("stage.progress", 100, None), 100.0)
    assert next_due([soon, later, idle, None], now=0.0) == 600.0 + DUE_SLACK_S
    # Past its due without a spell (a run waiting for a person): an event sets it again.
    assert next_due([soon, later], now=601.0) == 700.0 + DUE_SLACK_S
    assert next_due([idle, None], now=0.0) == math.inf
