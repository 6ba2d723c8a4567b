"""Concurrent operators: approve and reject racing on the same proposal, 20 times."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import Conflict, ItoClient, RetryPolicy, ValidationFailed
from ito_tui.contract import Proposal
from tests.tui.pipeline_live import start_run

pytestmark = [pytest.mark.faults, pytest.mark.slow]
ROUNDS = 20
RETRY = RetryPolicy(max_attempts=3, backoff_base_s=0.02, backoff_max_s=0.1)


async def next_pending(client: ItoClient, run_id: str, seen: set[str]) -> Proposal:
    for _ in range(400):
        for p in await client.proposals(run_id, status="pending"):
            if p.proposal_id not in seen:
                return p
        await asyncio.sleep(0.025)
    raise AssertionError("no new proposal")


@pytest.mark.long(seconds=14)
async def test_twenty_races_record_one_decision_each(sim_factory: Any) -> None:
    # A run that crawls (per-run time scale), so it is still training after 20 spikes.
    sim = sim_factory(scenario="happy", speed=2_000.0, approval_speed=1.0, proposal_ttl_s=1e9)
    run_id = await start_run(sim.url, "happy")
    alice = ItoClient(sim.url, token=SecretStr("s3cret"), retry=RETRY)
    bob = ItoClient(sim.url, token=SecretStr("hunter2"), retry=RETRY)
    async with alice, bob:
        for _ in range(400):
            if (await alice.run(run_id)).current_stage == "pretrain":
                break
            await asyncio.sleep(0.025)
        seen: set[str] = set()
        winners: list[str] = []
        for _round in range(ROUNDS):
            await alice.inject(run_id, "loss_spike", {"z": 9, "escalate": True})
            proposal = await next_pending(alice, run_id, seen)
            seen.add(proposal.proposal_id)
            a_key, b_key = str(uuid.uuid4()), str(uuid.uuid4())
            racers = [
                alice.approve(proposal.proposal_id, comment="a", idempotency_key=a_key),
                bob.reject(proposal.proposal_id, comment="b", idempotency_key=b_key),
            ]
            if _round % 2:
                racers.reverse()  # neither operator always starts first
            results = await asyncio.gather(*racers, return_exceptions=True)
            wins = [r for r in results if isinstance(r, Proposal)]
            losses = [r for r in results if isinstance(r, Conflict)]
            assert len(wins) == 1 and len(losses) == 1, results
            winner = wins[0].decided_by
            assert winner in ("alice", "bob")
            assert losses[0].code == "proposal.already_decided"
            assert losses[0].current is not None and losses[0].current.decided_by == winner
            winners.append(str(winner))
            # The winner retrying with the same key is replayed, not applied again.
            again = (
                await alice.approve(proposal.proposal_id, comment="a", idempotency_key=a_key)
                if winner == "alice"
                else await bob.reject(proposal.proposal_id, comment="b", idempotency_key=b_key)
            )
            assert again.decided_by == winner and again.decided_at == wins[0].decided_at
            # The same key with another body is refused.
            with pytest.raises(ValidationFailed) as info:
                if winner == "alice":
                    await alice.approve(proposal.proposal_id, comment="x", idempotency_key=a_key)
                else:
                    await bob.reject(proposal.proposal_id, comment="x", idempotency_key=b_key)
            assert info.value.code == "idempotency.key_reused" and info.value.status == 422
        stored = {p.proposal_id: p for p in await bob.proposals(run_id)}
        assert all(stored[pid].decided_by in ("alice", "bob") for pid in seen)
        # Exactly one decision event per proposal reached the event log.
        events = []
        stream = alice.events(run_id, since_seq=0)
        async with asyncio.timeout(60):
            async for event in stream:
                events.append(event)
                if event.seq >= (await alice.run(run_id)).last_event_seq - 1:
                    break
        await stream.aclose()
    decided = [
        e.data.proposal.proposal_id  # type: ignore[attr-defined]
        for e in events
        if e.type in ("proposal.approved", "proposal.rejected")
    ]
    assert sorted(decided) == sorted(seen), (len(decided), len(seen))
    print("winners", winners)
