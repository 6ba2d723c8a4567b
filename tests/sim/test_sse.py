"""The event stream: order, close after terminal, resume, resync, fan-out, 204, keepalive."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ito_tui.contract import STAGE_ORDER, TERMINAL_EVENT_TYPES, parse_event
from tests.support.servers import SimHandle

from .helpers import create_run, read_events, seqs, sse_messages, wait_for


@pytest.fixture
def client(sim: SimHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as c:
        yield c


def test_a_happy_run_streams_in_stage_order_and_closes_after_completion(
    client: httpx.Client,
) -> None:
    run = create_run(client)
    with client.stream("GET", f"/v1/runs/{run['run_id']}/events", timeout=30) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-request-id"]
        messages = list(sse_messages(response))  # ends only because the server closes
    assert messages[0].retry == 3000 and messages[0].event is None
    events = [m for m in messages if m.event]
    assert seqs(events) == list(range(1, len(events) + 1))
    parsed = [parse_event(m.data) for m in events]
    assert all(type(e).__name__ != "UnknownEvent" for e in parsed)
    assert [e.type for e in parsed if e.type in TERMINAL_EVENT_TYPES] == ["run.completed"]
    assert parsed[-1].type == "run.completed"
    assert all(
        m.event == e.type and int(m.id or 0) == e.seq for m, e in zip(events, parsed, strict=True)
    )
    order = [s.value for s in STAGE_ORDER]
    visited = [e.data.stage for e in parsed if e.type in ("stage.started", "stage.skipped")]
    assert [str(s) for s in visited] == order
    completed = [str(getattr(e, "data").stage) for e in parsed if e.type == "stage.completed"]  # noqa: B009
    assert completed == [s for s in order if s in completed]
    assert {"data_prep", "plan", "pretrain", "mid_train", "sft", "dpo"} <= set(completed)
    types = {e.type for e in parsed}
    assert {"data.manifest_ready", "data.dedup_completed", "data.decontam_completed",
            "plan.selected", "telemetry", "checkpoint.saved", "gate.passed"} <= types  # fmt: skip
    assert "gate.failed" not in types and "proposal.created" not in types
    assert 100 < len(events) < 3000


def test_reconnect_with_last_event_id_yields_exactly_the_missing_events(
    client: httpx.Client, sim_factory: Any
) -> None:
    run = create_run(client)
    rid = run["run_id"]
    _, head = read_events(client, rid, stop_after=40)
    assert seqs(head) == list(range(1, 41))
    _, tail = read_events(client, rid, headers={"Last-Event-ID": "40"})
    assert seqs(tail)[0] == 41 and tail[-1].event == "run.completed"
    assert seqs(head + tail) == list(range(1, len(head) + len(tail) + 1))
    _, again = read_events(client, rid, params={"since_seq": 40})
    assert [m.data for m in again] == [m.data for m in tail]
    _, header_wins = read_events(client, rid, headers={"Last-Event-ID": "45"},
                                 params={"since_seq": 2})  # fmt: skip
    assert seqs(header_wins)[0] == 46


def test_a_client_past_the_terminal_event_gets_204(client: httpx.Client) -> None:
    run = create_run(client)
    rid = run["run_id"]
    done = wait_for(client, rid, lambda r: r["state"] == "completed")
    last = done["last_event_seq"]
    status, _ = read_events(client, rid, headers={"Last-Event-ID": str(last)})
    assert status == 204
    assert read_events(client, rid, params={"since_seq": last + 5})[0] == 204
    status, final = read_events(client, rid, headers={"Last-Event-ID": str(last - 1)})
    assert status == 200 and [m.event for m in final] == ["run.completed"]
    assert client.get(f"/v1/runs/{rid}/events", headers={"Last-Event-ID": "x"}).status_code == 400
    assert client.get("/v1/runs/run_nope/events").status_code == 404


def test_resync_when_the_position_is_older_than_retention(sim_factory: Any) -> None:
    handle = sim_factory(event_retention=50)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        done = wait_for(client, rid, lambda r: r["state"] == "completed")
        last = done["last_event_seq"]
        _, events = read_events(client, rid, headers={"Last-Event-ID": "3"})
        assert [m.event for m in events] == ["resync"]
        envelope = events[0].envelope
        assert envelope["type"] == "resync" and int(events[0].id or 0) == last
        resync = parse_event(events[0].data)
        assert getattr(resync, "data").state == "completed"  # noqa: B009
        _, recent = read_events(client, rid, headers={"Last-Event-ID": str(last - 10)})
        assert seqs(recent) == list(range(last - 9, last + 1))


def test_resync_mid_run_then_live_events_follow(sim_factory: Any) -> None:
    handle = sim_factory(event_retention=20, speed=1_000_000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        wait_for(client, rid, lambda r: r["last_event_seq"] > 60)
        _, events = read_events(client, rid, params={"since_seq": 0})
        assert events[0].event == "resync"
        # Whatever this reader misses while it is slower than retention comes as a resync:
        # between resyncs the sequence is gap-free, and each resync moves it forward.
        position = 0
        for message in events:
            seq = int(message.id or 0)
            if message.event == "resync":
                assert seq > position
            else:
                assert seq == position + 1
            position = seq
        final = parse_event(events[-1].data)
        assert final.type == "run.completed" or getattr(final, "data").state == "completed"  # noqa: B009
        assert position == client.get(f"/v1/runs/{rid}").json()["last_event_seq"]


def test_two_concurrent_watchers_see_identical_sequences(client: httpx.Client) -> None:
    run = create_run(client)
    results: list[list[str]] = [[], []]

    def watch(i: int) -> None:
        _, events = read_events(client, run["run_id"])
        results[i] = [m.data for m in events]

    threads = [threading.Thread(target=watch, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results[0] and results[0] == results[1]


def test_keepalive_comments_arrive_every_heartbeat(sim_factory: Any) -> None:
    handle = sim_factory(heartbeat_s=0.2, speed=1.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        run = create_run(client)
        comments = 0
        with client.stream("GET", f"/v1/runs/{run['run_id']}/events") as response:
            for message in sse_messages(response):
                comments += message.comments.count("keepalive")
                if comments >= 2:
                    break
        assert comments >= 2
