"""`ItoClient.all_proposals` (`GET /v1/proposals`): what it asks, and answers checked against
the question (filters, `since`, newest first) on a purpose-built server; then against
desk_sim with two operators deciding on two runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, ProtocolError, ValidationFailed
from ito_tui.contract import Proposal, TrainingSpec

from . import samples
from .fakeserver import Conn, FakeServer, Received

ENDPOINT = "GET /v1/proposals"


def item(pid: str, *, at: str = samples.TS, **fields: Any) -> dict[str, Any]:
    return {**samples.proposal(pid), "created_at": at, **fields}


def serve(server: FakeServer, *pages: list[dict[str, Any]]) -> None:
    """Serve `pages` in order, each pointing at the next with cursor `c<n>`."""

    @server.route("GET", "/v1/proposals")
    async def _(req: Received, conn: Conn) -> None:
        n = int(req.query.get("cursor", ["c0"])[0][1:])
        nxt = f"c{n + 1}" if n + 1 < len(pages) else None
        await conn.json(200, {"items": pages[n], "next_cursor": nxt})


async def test_the_trail_asks_with_every_filter_and_follows_its_pages(
    server: FakeServer, client: ItoClient
) -> None:
    serve(
        server,
        [item("prop_3", at="2026-11-29T12:00:02.000Z", decided_by="bob", status="rejected")],
        [item("prop_1", at="2026-11-29T12:00:00.000Z", decided_by="bob", status="rejected")],
    )
    since = datetime(2026, 11, 29, 13, 0, tzinfo=timezone(timedelta(hours=1)))
    got = await client.all_proposals(
        status="rejected", run_id="run_1", decided_by="bob", since=since
    )
    assert [p.proposal_id for p in got] == ["prop_3", "prop_1"]
    assert all(isinstance(p, Proposal) for p in got)
    first, second = server.requests("GET", "/v1/proposals")
    assert first.query == {
        "status": ["rejected"],
        "run_id": ["run_1"],
        "decided_by": ["bob"],
        "since": ["2026-11-29T12:00:00Z"],  # the same instant, in UTC
        "limit": ["100"],
    }
    assert second.query["cursor"] == ["c1"] and second.query["since"] == first.query["since"]
    one = await client.all_proposals(all_pages=False)
    assert [p.proposal_id for p in one] == ["prop_3"]
    assert "status" not in server.requests("GET", "/v1/proposals")[-1].query


@pytest.mark.parametrize(
    ("pages", "kwargs", "says"),
    [
        (
            [[item("prop_1", status="approved")]],
            {"status": "pending"},
            "item 0 has status approved, asked for status pending",
        ),
        (
            [[item("prop_1", run_id="run_other")]],
            {"run_id": "run_1"},
            "item 0 has run_id run_other, asked for run_id run_1",
        ),
        (
            [[item("prop_1", decided_by="mallory", status="approved")]],
            {"decided_by": "bob"},
            "item 0 has decided_by mallory, asked for decided_by bob",
        ),
        (
            [[item("prop_1", at="2026-11-29T11:59:59.999Z")]],
            {"since": datetime(2026, 11, 29, 12, 0, tzinfo=UTC)},
            "item 0 was created at 2026-11-29T11:59:59.999000Z, asked for proposals created "
            "since 2026-11-29T12:00:00Z",
        ),
        (
            [
                [
                    item("prop_1", at="2026-11-29T12:00:00.000Z"),
                    item("prop_2", at="2026-11-29T12:00:00.001Z"),
                ]
            ],
            {},
            "item 1 (created 2026-11-29T12:00:00.001000Z) is newer than the one before it",
        ),
        # Out of order across pages is out of order too: the trail is one list.
        (
            [
                [item("prop_1", at="2026-11-29T12:00:00.000Z")],
                [item("prop_2", at="2026-11-29T13:00:00.000Z")],
            ],
            {},
            "item 1 (created 2026-11-29T13:00:00Z) is newer than the one before it",
        ),
    ],
    ids=["status", "run", "decided_by", "before since", "out of order", "out of order by page"],
)
async def test_an_answer_that_is_not_what_was_asked_is_a_protocol_error(
    server: FakeServer,
    client: ItoClient,
    pages: list[list[dict[str, Any]]],
    kwargs: dict[str, Any],
    says: str,
) -> None:
    serve(server, *pages)
    with pytest.raises(ProtocolError) as info:
        await client.all_proposals(**kwargs)
    assert str(info.value).startswith(f"{ENDPOINT}: {says}"), str(info.value)
    assert info.value.endpoint == ENDPOINT


async def test_ties_in_time_are_the_backends_to_order(
    server: FakeServer, client: ItoClient
) -> None:
    serve(server, [item("prop_1"), item("prop_2"), item("prop_0")])
    got = await client.all_proposals()
    assert [p.proposal_id for p in got] == ["prop_1", "prop_2", "prop_0"]


async def test_a_naive_since_is_refused_before_anything_is_sent(
    server: FakeServer, client: ItoClient
) -> None:
    serve(server, [])
    with pytest.raises(ValidationFailed, match="since needs a timezone") as info:
        await client.all_proposals(since=datetime(2026, 11, 29, 12, 0))
    assert info.value.endpoint == ENDPOINT
    assert server.requests("GET", "/v1/proposals") == []


# ------------------------------------------------------------ against desk_sim


def connect(url: str, token: str) -> ItoClient:
    return ItoClient(url, token=SecretStr(token), timeout=5.0)


async def pending(client: ItoClient, run_id: str) -> Proposal:
    async with asyncio.timeout(20):
        while True:
            found = await client.all_proposals(run_id=run_id, status="pending")
            if found:
                (proposal,) = found
                return proposal
            await asyncio.sleep(0.02)


async def ended(client: ItoClient, run_id: str) -> None:
    async with asyncio.timeout(20):
        while True:
            if str((await client.run(run_id)).state) in {"completed", "failed", "cancelled"}:
                return
            await asyncio.sleep(0.02)


async def test_two_operators_on_two_runs_are_on_the_trail_as_desk_sim_recorded(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="loss-spike")
    spec = {
        "model_size": "150M",
        "data_ref": "hf://org/ds@main",
        "target_capability": "general-chat",
        "budget_usd": "5000",
    }
    async with connect(sim.url, "s3cret") as alice, connect(sim.url, "hunter2") as bob:
        run_a = await alice.create_run(
            TrainingSpec.model_validate({**spec, "booking_id": "bk_h100_1n"})
        )
        first = await pending(alice, run_a.run_id)
        run_b = await bob.create_run(
            TrainingSpec.model_validate({**spec, "booking_id": "bk_h200_2n_roce"})
        )
        second = await pending(bob, run_b.run_id)
        approved = await alice.approve(first.proposal_id, comment="rewind")
        rejected = await bob.reject(second.proposal_id, comment="ride it out")
        for run in (run_a, run_b):
            await ended(alice, run.run_id)

        trail = await bob.all_proposals()
        assert [p.proposal_id for p in trail] == [second.proposal_id, first.proposal_id]
        recorded = {
            p.proposal_id: p for r in (run_a, run_b) for p in await alice.proposals(r.run_id)
        }
        assert {p.proposal_id: p for p in trail} == recorded
        for decided in (approved, rejected):
            listed = recorded[decided.proposal_id]
            assert (listed.decided_by, listed.decided_at, listed.comment) == (
                decided.decided_by,
                decided.decided_at,
                decided.comment,
            )
        assert [p.decided_by for p in trail] == ["bob", "alice"]

        by_alice = await bob.all_proposals(decided_by="alice")
        assert [p.proposal_id for p in by_alice] == [first.proposal_id]
        assert [p.proposal_id for p in await alice.all_proposals(status="rejected")] == [
            second.proposal_id
        ]
        assert await alice.all_proposals(status="pending") == []
        on_a = await alice.all_proposals(run_id=run_a.run_id)
        assert [p.proposal_id for p in on_a] == [first.proposal_id]
        since_b = await alice.all_proposals(since=second.created_at)
        assert [p.proposal_id for p in since_b] == [second.proposal_id]
        after_all = second.created_at + timedelta(microseconds=1)
        assert await alice.all_proposals(since=after_all) == []
