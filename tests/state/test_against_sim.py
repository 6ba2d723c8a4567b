"""The reducers against the real simulator's streams: each scenario ends where the run says.

Every scenario's full event stream (real SSE on loopback, proposals approved as
they come) is fed to a `RunTracker`; the resulting `RunState` must agree with the
backend's own `Run` snapshot at the end, and a second pass that applies every
event twice must give the same state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, RetryPolicy, StreamPolicy
from ito_tui.contract import EventBase, Run, TrainingSpec
from ito_tui.state import RunState, RunTracker

RETRY = RetryPolicy(max_attempts=3, backoff_base_s=0.02, backoff_max_s=0.1)
STREAM = StreamPolicy(reconnect_base_s=0.02, reconnect_floor_s=0.02, reconnect_max_s=0.2)

EXPECTED = {
    "happy": "completed",
    "showcase": "completed",
    "gate-fail": "gate_failed",
    "node-failure": "completed",
    "budget": None,
}


def sim_client(sim: Any) -> ItoClient:
    """A client of `sim` that retries and reconnects fast."""
    return ItoClient(sim.url, token=SecretStr(sim.token), timeout=10.0, retry=RETRY, stream=STREAM)


async def start_150m_run(c: ItoClient, scenario: str) -> Run:
    """A 150M run to DPO on the first completed booking, in `scenario`."""
    (booking, *_) = await c.bookings(status="completed")
    spec = TrainingSpec.model_validate(
        {
            "booking_id": booking.booking_id,
            "model_size": "150M",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general",
            "budget_usd": "30000",
            "post_training": "dpo",
            "sim": {"scenario": scenario},
        }
    )
    return await c.create_run(spec)


async def run_scenario(sim: Any, scenario: str) -> tuple[list[EventBase], Any]:
    async with sim_client(sim) as c:
        run = await start_150m_run(c, scenario)
        events: list[EventBase] = []
        async with asyncio.timeout(60):
            async for event in c.events(run.run_id):
                events.append(event)
                if event.type == "proposal.created":
                    # A person approves (the rollback path: approved, executed, rewind).
                    await c.approve(event.data.proposal.proposal_id)  # type: ignore[attr-defined]
        return events, await c.run(run.run_id)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
async def test_scenario_stream_reduces_to_the_backend_snapshot(
    sim_factory: Callable[..., Any], scenario: str
) -> None:
    sim = sim_factory(scenario=scenario)
    events, final = await run_scenario(sim, scenario)
    assert events and events[-1].terminal

    tracker = RunTracker(final.run_id)
    for e in events:
        assert tracker.feed(e)
    s = tracker.state
    assert s.terminal and s.state == str(final.state)
    assert s.last_seq == final.last_event_seq
    if EXPECTED[scenario] is not None:
        assert s.outcome == EXPECTED[scenario]
    assert s.failure == final.failure
    snap = RunState.from_run(final).stages[:9]
    assert [str(x.state) for x in s.stages[:9]] == [str(x.state) for x in snap]
    # Stage times are on the run's (simulated) clock, as in the snapshot.
    assert [x.started_at for x in s.stages[:9]] == [x.started_at for x in snap]
    assert [x.ended_at for x in s.stages[:9]] == [x.ended_at for x in snap]
    assert set(s.pending_proposals) == set(final.pending_proposal_ids)
    assert list(s.faults) == final.faults
    assert s.spend == final.spend and s.usd_spent == final.spend.usd_spent
    assert s.plan == final.plan
    assert [x.gate for x in s.stages[:9]] == [x.gate for x in snap]
    assert len(tracker.log) > 0
    if any(e.type == "telemetry" for e in events):
        assert tracker.bank["loss"].count > 0
    if scenario == "showcase":
        assert {"proposal.approved", "proposal.executed", "fault.recovered"} <= {
            e.type for e in events
        }
        assert len(s.rewinds) == 1  # the rollback; the telemetry that follows adds none
    if any(e.type == "proposal.executed" for e in events):
        # The approved rollback is a marker on the state and on the charts.
        assert s.rewinds and s.rewinds[-1].to_step < s.rewinds[-1].from_step
        assert any(label.startswith("rewind") for _, label in tracker.bank["loss"].markers)

    replayed = RunState.empty(final.run_id)
    for e in events:
        replayed = replayed.apply(e).apply(e)
    assert replayed == s


async def test_a_real_resync_reseeds_the_tracker(sim_factory: Callable[..., Any]) -> None:
    """Resuming from a seq older than the retention window starts with `resync`."""
    sim = sim_factory(scenario="node-failure", event_retention=40)
    _, final = await run_scenario(sim, "node-failure")
    tracker = RunTracker(final.run_id)
    tracker.bank.add_marker(0.0, "rewind 10→5")  # a marker from before the gap
    async with ItoClient(sim.url, token=SecretStr(sim.token), retry=RETRY, stream=STREAM) as c:
        async with asyncio.timeout(30):
            async for event in c.events(final.run_id, since_seq=1):
                tracker.feed(event)
    s = tracker.state
    # Two re-seeds: the expired history's snapshot, and the run's end re-read as a
    # `resync` at the last seq (which `feed` re-bases on, as the run screen did).
    assert s.resynced == 2
    assert s.terminal and s.state == str(final.state) and s.last_seq == final.last_event_seq
    assert s.outcome == "completed" and s.failure == final.failure
    assert list(s.faults) == final.faults and s.spend == final.spend and s.plan == final.plan
    snap = RunState.from_run(final).stages[:9]
    assert [x.state for x in s.stages[:9]] == [x.state for x in snap]
    assert ("resync", "warn") in {(e.type, e.severity) for e in tracker.log}
    assert tracker.bank["loss"].markers[0] == (0.0, "rewind 10→5")
