"""A finished run the desk already holds when it starts (`--history happy`): the demo's
"previous run" to compare the new one with.

It runs the same code path as `POST /v1/runs` (the planner's pre-flight, `Engine.create`)
on a booking other than the one the demo's operator picks first, then plays the run to
its end at once, before the server listens: the runs list shows it completed from the
first screen. Only on an empty store, so a restarted desk does not add a second.

The run is played on a clock in the past: it starts the estimate's p90 wall time before
the desk does, and each five simulated minutes (`STEP_S`) are stamped with their wall
time, never later than now. Played on the real clock, its week of events all carried the
second the desk started: its event log read one time for a 7-day run, and its
time-windowed charts were one column.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal

from ito_tui.contract import PostTraining, SimOptions, TrainingSpec, now_utc

from .engine import Engine
from .routes_desk import preflight
from .runtime import Desk

__all__ = ["HISTORY_BOOKING", "history_spec", "seed_history"]

HISTORY_BOOKING = "bk_h100_4n_ib"
"""The planner's worked example (8B on 4x8 H100, infiniband); the demo's operator picks
the booking that ends soonest (`bk_h100_8n_eth`), so this one stays free."""
HISTORY_SPEED = 1e9
"""Simulated seconds per wall second while the history is played (all of it at once)."""
STEP_S = 300.0
"""Simulated seconds per advance while the history is played: its events' wall-time grain."""


def history_spec(scenario: str) -> TrainingSpec:
    """The reference spec of the demo (8B on fineweb-edu, $30,000, SFT and DPO)."""
    return TrainingSpec(
        booking_id=HISTORY_BOOKING,
        model_size="8B",
        data_ref="catalog://fineweb-edu@1.3",
        target_capability="general-chat",
        budget_usd=Decimal("30000"),
        post_training=PostTraining.dpo,
        sim=SimOptions(scenario=scenario),
    )


def seed_history(desk: Desk, scenario: str) -> str | None:
    """Add one finished run of `scenario` to an empty store; its id (None: not added)."""
    if desk.store.list_runs(state=None, booking_id=None, after=None, limit=1):
        return None
    spec = history_spec(scenario)
    booking = desk.booking(spec.booking_id)
    if booking is None:
        return None
    estimate = preflight(desk, spec, booking)
    if estimate.refusals:
        return None
    operator = next(iter(desk.config.tokens.values()), "operator")
    now = now_utc()
    started = now - timedelta(hours=estimate.wall_clock_h_p90)
    engine = Engine.create(
        run_id="run_" + secrets.token_hex(6),
        spec=spec,
        booking=booking,
        estimate=estimate,
        operator=operator,
        scenario=scenario,
        seed=desk.config.seed,
        speed=HISTORY_SPEED,
        approval_speed=None,
        ttl_s=desk.config.proposal_ttl_s,
        now=started,
    )
    run_id = str(engine.run["run_id"])
    desk.commit(engine, operator=operator)
    clock = float(engine.s["clock"])
    for step in range(1, 1_000_000):  # a happy 8B run ends in about 10,000 simulated minutes
        if engine.done:
            break
        clock += STEP_S
        engine.advance(clock, min(now, started + timedelta(seconds=clock)))
        if step % 1_000 == 0:
            desk.commit(engine)  # what it produced so far, in bounded batches
    desk.commit(engine)
    return run_id
