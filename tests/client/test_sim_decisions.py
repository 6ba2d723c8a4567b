"""Against the in-thread desk_sim fixtures: idempotency and racing human decisions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import Conflict, ItoClient, RetryPolicy, StreamPolicy, ValidationFailed
from ito_tui.contract import EventBase, Proposal, TrainingSpec

pytestmark = pytest.mark.faults

RETRY = RetryPolicy(max_attempts=3, backoff_base_s=0.02, backoff_max_s=0.1)
STREAM = StreamPolicy(reconnect_base_s=0.02, reconnect_floor_s=0.02, reconnect_max_s=0.2)


def connect(sim: Any, token: str) -> ItoClient:
    return ItoClient(sim.url, token=SecretStr(token), timeout=5.0, retry=RETRY, stream=STREAM)


async def spec_for(client: ItoClient, **overrides: object) -> TrainingSpec:
    (booking, *_) = await client.bookings(status="completed")
    fields: dict[str, object] = {
        "booking_id": booking.booking_id,
        "model_size": "150M",
        "data_ref": "catalog://fineweb-edu@1.3",
        "target_capability": "general",
        "budget_usd": "30000",
    }
    return TrainingSpec.model_validate(fields | overrides)


async def test_reused_idempotency_key_with_other_body_is_refused(sim: Any) -> None:
    async with connect(sim, sim.token) as c:
        spec = await spec_for(c)
        first = await c.create_run(spec, idempotency_key="key-A")
        assert (await c.create_run(spec, idempotency_key="key-A")).run_id == first.run_id
        other = spec.model_copy(update={"budget_usd": spec.budget_usd + 1})
        with pytest.raises(ValidationFailed) as info:
            await c.create_run(other, idempotency_key="key-A")
        assert info.value.code == "idempotency.key_reused"


async def test_racing_approve_and_reject_records_one_decision(
    sim_factory: Callable[..., Any],
) -> None:
    # A slow clock while the proposal waits, so it cannot expire before we decide; and a
    # run that goes on for a while once decided: at 50,000x it ended 0.15 s after the
    # first decision, before a loaded machine served the second (409 `run.terminal`).
    # Here, with post-training after it, the run lasts ~2.4 s past the decision.
    sim = sim_factory(scenario="loss-spike", speed=5_000.0, approval_speed=1.0)
    async with connect(sim, "s3cret") as alice, connect(sim, "hunter2") as bob:
        run = await alice.create_run(await spec_for(alice, post_training="rlvr"))
        proposal: Proposal | None = None
        events: list[EventBase] = []
        stream = alice.events(run.run_id)
        async with asyncio.timeout(30):
            async for event in stream:
                events.append(event)
                if event.type == "proposal.created":
                    proposal = event.data.proposal  # type: ignore[attr-defined]
                    break
        await stream.aclose()
        assert proposal is not None, [e.type for e in events][-10:]
        results = await asyncio.gather(
            alice.approve(proposal.proposal_id, comment="go"),
            bob.reject(proposal.proposal_id, comment="no"),
            return_exceptions=True,
        )
        wins = [r for r in results if isinstance(r, Proposal)]
        losses = [r for r in results if isinstance(r, Conflict)]
        assert len(wins) == 1 and len(losses) == 1, results
        winner, loser = wins[0], losses[0]
        assert loser.code == "proposal.already_decided"
        assert loser.current is not None
        assert loser.current.proposal_id == proposal.proposal_id
        # An approved proposal may already have been executed by the time bob lost.
        assert loser.current.status in {
            winner.status,
            "executed" if winner.status == "approved" else "",
        }
        assert loser.current.decided_by == winner.decided_by
        (stored,) = [
            p for p in await bob.proposals(run.run_id) if p.proposal_id == proposal.proposal_id
        ]
        assert stored.decided_by == winner.decided_by
