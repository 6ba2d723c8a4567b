"""`GET /v1/proposals`, the decision trail: two operators decide on two runs, and the trail,
each of its filters and its pages say what desk_sim recorded; expiry is on the trail too."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from ito_tui.contract import Page, Proposal, parse_event
from ito_tui.desk_sim.store import Store
from ito_tui.desk_sim.trail import proposals_page
from tests.support.servers import SimHandle

from .helpers import REFERENCE_SPEC, SMALL_SPEC, create_run, key, read_events, wait_for
from .test_endpoints import problem
from .test_proposals import pending_proposal

PAGE = Page[Proposal]


def trail(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    """Every proposal the trail lists for `params`, one page after another."""
    response = client.get("/v1/proposals", params=params)
    assert response.status_code == 200, response.text
    page = PAGE.model_validate(response.json())
    assert page.next_cursor is None, "more than one default page in a test"
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [str(p["proposal_id"]) for p in items]


def decide(client: httpx.Client, verb: str, pid: str, token: str, comment: str) -> dict[str, Any]:
    headers = {**key(), "Authorization": f"Bearer {token}"}
    response = client.post(
        f"/v1/proposals/{pid}/{verb}", json={"comment": comment}, headers=headers
    )
    assert response.status_code == 200, response.text
    decided: dict[str, Any] = response.json()
    return decided


def two_decided_runs(client: httpx.Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run A's proposal approved by alice, then run B's rejected by bob; both runs ended."""
    run_a = create_run(client, REFERENCE_SPEC)["run_id"]
    first = pending_proposal(client, run_a)
    run_b = create_run(client, SMALL_SPEC)["run_id"]
    second = pending_proposal(client, run_b)
    approved = decide(client, "approve", first["proposal_id"], "s3cret", "rewind A")
    rejected = decide(client, "reject", second["proposal_id"], "hunter2", "B rides it out")
    for run_id in (run_a, run_b):
        wait_for(client, run_id, lambda r: r["state"] == "completed")
    return approved, rejected


def test_two_operators_decisions_on_two_runs_are_on_the_trail_as_recorded(
    sim_factory: Callable[..., SimHandle],
) -> None:
    sim = sim_factory(scenario="loss-spike")
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        approved, rejected = two_decided_runs(client)
        a, b = approved["proposal_id"], rejected["proposal_id"]
        run_a, run_b = approved["run_id"], rejected["run_id"]
        assert approved["created_at"] < rejected["created_at"]
        everything = trail(client)
        assert ids(everything) == [b, a]  # newest first
        # What the trail shows is what desk_sim recorded: the runs' own lists and the
        # proposal events of their streams.
        recorded = {
            p["proposal_id"]: p
            for r in (run_a, run_b)
            for p in client.get(f"/v1/runs/{r}/proposals").json()
        }
        assert {p["proposal_id"]: p for p in everything} == recorded
        for item in everything:
            Proposal.model_validate(item)
        by_id = {p["proposal_id"]: p for p in everything}
        assert by_id[a]["status"] == "executed" and by_id[b]["status"] == "rejected"
        for decided in (approved, rejected):
            listed = by_id[decided["proposal_id"]]
            for field in ("decided_by", "decided_at", "comment", "created_at", "trigger"):
                assert listed[field] == decided[field], field
        assert (by_id[a]["decided_by"], by_id[a]["comment"]) == ("alice", "rewind A")
        assert (by_id[b]["decided_by"], by_id[b]["comment"]) == ("bob", "B rides it out")
        _, events = read_events(client, run_a)
        last_seen = [
            e for e in map(parse_event, (m.data for m in events)) if e.type.startswith("proposal.")
        ][-1]
        assert last_seen.data.proposal == Proposal.model_validate(by_id[a])  # type: ignore[attr-defined]

        assert ids(trail(client, status="executed")) == [a]
        assert ids(trail(client, status="rejected")) == [b]
        assert trail(client, status="pending") == []
        assert ids(trail(client, run_id=run_a)) == [a]
        assert ids(trail(client, run_id=run_b)) == [b]
        assert trail(client, run_id="run_nobody") == []
        assert ids(trail(client, decided_by="alice")) == [a]
        assert ids(trail(client, decided_by="bob")) == [b]
        assert trail(client, decided_by="carol") == []
        assert trail(client, decided_by="bob", run_id=run_a) == []
        assert ids(trail(client, status="rejected", decided_by="bob", run_id=run_b)) == [b]

        created_a = Proposal.model_validate(by_id[a]).created_at
        created_b = Proposal.model_validate(by_id[b]).created_at
        assert ids(trail(client, since=approved["created_at"])) == [b, a]
        # One microsecond after A was created is after A (stored to the millisecond).
        just_after = (created_a + timedelta(microseconds=1)).isoformat()
        assert ids(trail(client, since=just_after)) == [b]
        # The same instant written with another offset is the same bound.
        assert ids(trail(client, since=created_b.astimezone().isoformat())) == [b]
        later = (created_b + timedelta(milliseconds=1)).isoformat().replace("+00:00", "Z")
        assert trail(client, since=later) == []

        first = client.get("/v1/proposals", params={"limit": 1}).json()
        assert ids(first["items"]) == [b] and first["next_cursor"]
        second = client.get("/v1/proposals", params={"limit": 1, "cursor": first["next_cursor"]})
        assert ids(second.json()["items"]) == [a] and second.json()["next_cursor"] is None
        filtered = client.get("/v1/proposals", params={"limit": 1, "decided_by": "alice"})
        assert ids(filtered.json()["items"]) == [a] and filtered.json()["next_cursor"] is None


def test_pages_walk_the_whole_trail_newest_first_and_new_proposals_do_not_shift_them(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "trail.db")
    try:
        rows = [
            (f"prop_{n:02d}", f"run_{n % 3}", f"2026-11-29T12:00:0{n // 4}.000Z") for n in range(12)
        ]
        with store.tx():
            for pid, run_id, created in rows:
                body = json.dumps({"proposal_id": pid, "run_id": run_id, "created_at": created})
                store.save_proposal(pid, run_id, "pending", created, body)
        expected = [pid for _c, pid in sorted(((c, p) for p, _r, c in rows), reverse=True)]
        walked: list[str] = []
        after: tuple[str, str] | None = None
        while True:
            page = proposals_page(
                store.conn,
                status=None,
                run_id=None,
                decided_by=None,
                since=None,
                after=after,
                limit=5,
            )
            walked += [pid for _c, pid, _b in page]
            if len(page) < 5:
                break
            after = page[-1][0], page[-1][1]
            if len(walked) == 5:  # a newer proposal arrives while the operator pages
                with store.tx():
                    store.save_proposal(
                        "prop_99", "run_0", "pending", "2026-11-29T12:00:09.000Z", "{}"
                    )
        assert walked == expected
    finally:
        store.close()


def test_bad_filters_and_cursors_are_refused_like_other_routes(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        for params in (
            {"status": "bogus"},
            {"since": "yesterday"},
            {"since": "2026-11-29"},  # a date is no time
            {"since": "2026-11-29T12:00:00"},  # no offset: ambiguous
            {"since": "2026-13-01T00:00:00Z"},
            {"since": "0001-01-01T00:00:00+01:00"},  # before year 1 once in UTC
            {"limit": 0},
        ):
            body = problem(client.get("/v1/proposals", params=params), 400, "request.invalid")
            assert body.errors, params
        for cursor in ("abc", "eyJyIjogMX0", "eyJjIjogMSwgInAiOiAyfQ"):  # {"r": 1}, {"c":1,"p":2}
            response = client.get("/v1/proposals", params={"cursor": cursor})
            problem(response, 400, "request.invalid_cursor")
        problem(httpx.get(f"{sim.url}/v1/proposals"), 401, "auth.invalid")
        assert trail(client, since="0999-01-01T00:00:00Z") == []  # no runs yet


@pytest.mark.faults
def test_an_expired_proposal_says_when_it_expired_on_the_trail(
    sim_factory: Callable[..., SimHandle],
) -> None:
    handle = sim_factory(scenario="loss-spike", approval_speed=4000.0, proposal_ttl_s=2000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        run_id = create_run(client)["run_id"]
        pid = pending_proposal(client, run_id)["proposal_id"]
        wait_for(client, run_id, lambda r: r["state"] == "completed")
        (listed,) = trail(client, status="expired")
        assert listed["proposal_id"] == pid and listed["decided_by"] is None
        expired = Proposal.model_validate(listed)
        assert expired.decided_at is not None and expired.decided_at >= expired.created_at
        assert trail(client, decided_by="alice") == []
        _, events = read_events(client, run_id)
        (event,) = [parse_event(m.data) for m in events if m.event == "proposal.expired"]
        assert event.data.proposal == expired  # type: ignore[attr-defined]


def test_a_run_that_ends_with_its_proposal_pending_expires_it_with_the_time(
    sim_factory: Callable[..., SimHandle],
) -> None:
    sim = sim_factory(scenario="loss-spike")
    with httpx.Client(base_url=sim.url, headers=sim.headers("hunter2"), timeout=10) as client:
        run_id = create_run(client)["run_id"]
        pid = pending_proposal(client, run_id)["proposal_id"]
        response = client.post(f"/v1/runs/{run_id}/cancel", json={}, headers=key())
        assert response.status_code == 202, response.text
        wait_for(client, run_id, lambda r: r["state"] == "cancelled")
        (listed,) = trail(client, run_id=run_id)
        assert listed["proposal_id"] == pid and listed["status"] == "expired"
        assert listed["comment"] == "run ended before a decision"
        assert listed["decided_by"] is None and listed["decided_at"] is not None


def test_a_database_from_before_the_trail_gets_its_decided_by_column(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE proposals(proposal_id TEXT PRIMARY KEY, run_id TEXT NOT NULL,"
        " status TEXT NOT NULL, created_at TEXT NOT NULL, body TEXT NOT NULL);"
        "CREATE INDEX proposals_run ON proposals(run_id);"
    )
    body = {"proposal_id": "prop_1", "run_id": "run_1", "decided_by": "bob"}
    conn.execute(
        "INSERT INTO proposals VALUES ('prop_1', 'run_1', 'rejected',"
        " '2026-11-29T12:00:00.000Z', ?)",
        (json.dumps(body),),
    )
    conn.commit()
    conn.close()
    store = Store(db)
    try:
        page = proposals_page(
            store.conn, status=None, run_id=None, decided_by="bob", since=None, after=None, limit=10
        )
        assert [pid for _c, pid, _b in page] == ["prop_1"]
        assert store.proposals("run_1", None) == [json.dumps(body)]
        indexes = {
            r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='index'")
        }
        assert "proposals_decider_created" in indexes and "proposals_run" not in indexes
    finally:
        store.close()


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"status": "pending"},
        {"run_id": "run_1"},
        {"decided_by": "bob"},
        {"status": "rejected", "run_id": "run_1"},
    ],
)
def test_every_trail_query_reads_an_index_in_order(tmp_path: Path, filters: dict[str, str]) -> None:
    store = Store(tmp_path / "plan.db")
    try:
        captured: list[tuple[str, list[Any]]] = []
        store.conn.set_trace_callback(lambda sql: captured.append((sql, [])))
        args = {"status": None, "run_id": None, "decided_by": None, **filters}
        proposals_page(
            store.conn,
            **args,
            since="2026-11-29T12:00:00.000Z",
            after=("2026-11-30T00:00:00.000Z", "prop_9"),
            limit=51,
        )
        store.conn.set_trace_callback(None)
        (sql,) = [s for s, _a in captured if s.startswith("SELECT")]
        plan = " / ".join(str(r[3]) for r in store.conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
        assert "TEMP B-TREE" not in plan, plan  # no sort of the whole match
    finally:
        store.close()
