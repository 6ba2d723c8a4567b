"""One run, two paths: the views of a snapshot equal the views of the events before it.

The run screen builds its state from events; the runs list and the booking picker from
`GET /v1/runs/{id}`. Against the real simulator, at the moment a run waits for a person
(nothing moves) both give the same step, ETA and stage statuses; at its end (whose event
carries the final spend) the same spend too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ito_tui.contract import Run
from ito_tui.state import RunState, RunTracker, progress_of_run, stage_views

from .test_against_sim import sim_client, start_150m_run


def statuses(state: RunState) -> list[tuple[str, str]]:
    return [(v.name, v.status) for v in stage_views(state)]


async def test_snapshot_and_events_give_the_same_progress_and_stages(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="showcase")
    async with sim_client(sim) as c:
        run = await start_150m_run(c, "showcase")
        tracker = RunTracker(run)  # as the run screen: seeded, then the events
        # Known from the start: the spec stops at DPO, the estimate leaves out the rest.
        assert {n for n, st in statuses(tracker.state) if st == "skipped"} == {
            "ladder",
            "long_context",
            "rlvr",
        }
        waiting: list[Run] = []
        compared = 0
        async with asyncio.timeout(60):
            async for event in c.events(run.run_id):
                tracker.feed(event)
                if event.type == "proposal.created":
                    waiting.append(await c.run(run.run_id))
                pending = next((s for s in waiting if s.last_event_seq == tracker.last_seq), None)
                if pending is not None:
                    # The run waits for a person: the snapshot and the events agree on the
                    # step, ETA and stages. Not on spend: the backend bills the GPUs from
                    # the last telemetry sample to the pause, and no event says so.
                    ours, theirs = tracker.progress(), progress_of_run(pending)
                    assert replace(ours, usd_spent=None) == replace(theirs, usd_spent=None)
                    assert ours.usd_spent is not None and theirs.usd_spent is not None
                    assert ours.usd_spent <= theirs.usd_spent
                    assert statuses(tracker.state) == statuses(RunState.from_run(pending))
                    assert dict(statuses(tracker.state))["pretrain"] == "paused"
                    compared += 1
                    waiting.remove(pending)
                    (proposal_id,) = tracker.state.pending_proposals
                    await c.approve(proposal_id)
        final = await c.run(run.run_id)
    assert compared >= 1
    assert tracker.progress() == progress_of_run(final)
    assert tracker.progress().eta_s is None and tracker.progress().state == "completed"
    assert statuses(tracker.state) == statuses(RunState.from_run(final))
