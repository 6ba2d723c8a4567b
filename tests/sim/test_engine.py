"""The simulator engine without HTTP: restarts from JSON, demo pacing, stage selection."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from ito_tui.contract import EventBase, TrainingSpec
from ito_tui.desk_sim import DEMO_SPEED
from ito_tui.desk_sim.catalog import seed_bookings
from ito_tui.desk_sim.engine import Engine
from ito_tui.desk_sim.planner import plan_and_estimate

from .helpers import REFERENCE_SPEC

NOW = datetime(2026, 11, 29, 22, 0, tzinfo=UTC)


def engine_for(scenario: str = "showcase", approval_speed: float | None = 240.0,
               **overrides: Any) -> Engine:  # fmt: skip
    spec = TrainingSpec.model_validate({**REFERENCE_SPEC, **overrides})
    booking = {b.booking_id: b for b in seed_bookings(NOW)}[spec.booking_id]
    estimate = plan_and_estimate(spec, booking, max_budget_usd=Decimal(10**6), now=NOW)
    assert not estimate.refusals
    return Engine.create(
        run_id="run_test", spec=spec, booking=booking, estimate=estimate, operator="alice",
        scenario=scenario, seed=0, speed=DEMO_SPEED, approval_speed=approval_speed,
        ttl_s=4 * 3600.0, now=NOW,
    )  # fmt: skip


def run_to_end(engine: Engine, wall_step: float = 0.5) -> tuple[list[EventBase], float]:
    """Drive the engine like the server's tick loop; (events, wall seconds it took)."""
    events: list[EventBase] = []
    wall = 0.0
    while not engine.done:
        engine.advance(float(engine.s["clock"]) + wall_step * engine.speed(), NOW)
        events += engine.drain()[0]
        wall += wall_step
        assert wall < 3600
    return events, wall


def test_a_showcase_run_at_demo_speed_takes_about_four_minutes() -> None:
    events, wall = run_to_end(engine_for())
    assert 180 <= wall <= 300, wall
    types = [e.type for e in events]
    assert types[-1] == "run.completed"
    assert {"fault.recovered", "proposal.created", "proposal.expired"} <= set(types)
    assert [getattr(e, "data").action for e in events if e.type == "loss.spike_detected"] == [  # noqa: B009
        "skipped", "escalated"
    ]  # fmt: skip
    assert "gate.failed" not in types and 300 < len(events) < 3000


def test_restoring_from_json_mid_run_continues_identically() -> None:
    straight = engine_for(approval_speed=None)
    resumed = engine_for(approval_speed=None)
    a, _ = run_to_end(straight, wall_step=7.0)
    b: list[EventBase] = []
    for _ in range(40):
        resumed.advance(float(resumed.s["clock"]) + 7.0 * resumed.speed(), NOW)
        b += resumed.drain()[0]
    # Round-trip the state through JSON, as a restart from SQLite does.
    resumed = Engine.from_state(json.loads(json.dumps(resumed.to_state())))
    rest, _ = run_to_end(resumed, wall_step=7.0)
    b += rest
    assert [(e.seq, e.type) for e in a] == [(e.seq, e.type) for e in b]
    assert [e.seq for e in b] == list(range(1, len(b) + 1))


@pytest.mark.parametrize(
    ("overrides", "ran", "skipped"),
    [
        ({}, {"pretrain", "mid_train", "sft", "dpo"}, {"ladder", "long_context", "rlvr"}),
        ({"data_kind": "custom", "post_training": None}, {"ladder", "pretrain"},
         {"long_context", "sft", "dpo", "rlvr"}),
        ({"target_capability": "long-context", "post_training": "rlvr"},
         {"long_context", "sft", "dpo", "rlvr"}, {"ladder"}),
    ],
)  # fmt: skip
def test_stages_follow_the_spec(overrides: dict[str, Any], ran: set[str],
                                skipped: set[str]) -> None:  # fmt: skip
    events, _ = run_to_end(engine_for("happy", **overrides), wall_step=20.0)
    started = {str(getattr(e, "data").stage) for e in events if e.type == "stage.started"}  # noqa: B009
    skips = {str(getattr(e, "data").stage) for e in events if e.type == "stage.skipped"}  # noqa: B009
    assert ran <= started and skipped == skips
    samples = [getattr(e, "data") for e in events if e.type == "telemetry"]  # noqa: B009
    assert all(s.mfu_frac is None for s in samples)  # the planner picks fp8 on H100
    assert all((s.rl is not None) == (s.stage == "rlvr") for s in samples)
    assert all(s.goodput.ml_productivity_frac <= s.goodput.runtime_frac for s in samples)
    spends = [s.spend_usd for s in samples]
    assert spends == sorted(spends)


def test_a_late_tick_stamps_each_item_when_it_was_due_not_all_at_once() -> None:
    """A tick that comes 60 s late (a loaded machine) catches up on a minute of samples:
    each carries the wall moment it was due, in order, within the tick, so a chart spreads
    them over that minute instead of stacking them in one column."""
    engine = engine_for("happy", approval_speed=None)
    wall = NOW
    engine.advance(float(engine.s["clock"]) + 0.5 * engine.speed(), wall)
    engine.drain()
    late = wall + timedelta(seconds=60)
    engine.advance(float(engine.s["clock"]) + 60 * engine.speed(), late)
    events = engine.drain()[0]
    stamps = [e.ts for e in events]
    samples = [getattr(e, "data").ts for e in events if e.type == "telemetry"]  # noqa: B009
    assert len(samples) > 10
    assert stamps == sorted(stamps) and wall <= stamps[0] and stamps[-1] <= late
    assert samples == sorted(samples) and len(set(samples)) == len(samples)
    assert samples[-1] - samples[0] > timedelta(seconds=30), (samples[0], samples[-1])
    assert engine.now == late  # the tick itself (the run's updated_at) is the late wall time
