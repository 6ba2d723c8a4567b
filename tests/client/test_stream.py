"""EventStream against a scripted hostile server: exactly once, in order, whatever happens."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import pytest

from ito_tui.client import (
    AuthError,
    BackendUnavailable,
    CapabilityMissing,
    ConnectionState,
    Forbidden,
    ItoClient,
    NotFound,
    ProtocolError,
    StreamPolicy,
)
from ito_tui.client.invalid import invalid_event
from ito_tui.client.sse import SSEMessage
from ito_tui.contract import EventBase, Run, UnknownEvent
from tests.support.stack import starved_during

from . import samples
from .conftest import TS, envelope, make_client, sse
from .fakeserver import Conn, FakeServer, Received, capabilities_body
from .sserun import (
    ScriptedRun,
    clean_close,
    drop_mid,
    keepalive_then_normal,
    raw,
    replay_from,
    stall,
    status,
)

pytestmark = pytest.mark.faults


async def collect(client: ItoClient, run_id: str = "run_1", **kw: object) -> list[EventBase]:
    out: list[EventBase] = []
    async with asyncio.timeout(20):
        async for event in client.events(run_id, **kw):  # type: ignore[arg-type]
            out.append(event)
    return out


def seqs(events: list[EventBase]) -> list[int]:
    return [e.seq for e in events]


async def test_happy_stream_ends_after_terminal(server: FakeServer, client: ItoClient) -> None:
    run = ScriptedRun(server, n=10)
    events = await collect(client)
    assert seqs(events) == list(range(1, 11))
    assert events[-1].type == "run.completed" and events[-1].terminal
    assert run.last_event_ids == [None], "no reconnect after the terminal event"


async def test_on_state_reports_connection_changes_not_every_event(
    server: FakeServer, client: ItoClient
) -> None:
    ScriptedRun(server, n=50)
    states: list[ConnectionState] = []
    stream = client.events("run_1", on_state=states.append)
    events = [e async for e in stream]
    assert len(events) == 50
    assert [s.status for s in states] == ["connecting", "live", "closed"]
    assert states[-1].last_seq == 50


async def test_exactly_once_across_drops_stalls_errors_and_replays(
    server: FakeServer, client: ItoClient
) -> None:
    run = ScriptedRun(
        server,
        n=30,
        script=[
            drop_mid(3),
            stall(2),
            status(503, {"Retry-After": "0"}),
            replay_from(1, 8),
            drop_mid(0),
            clean_close(4),
            status(502),
            stall(5, keepalive_s=None),
        ],
    )
    states: list[ConnectionState] = []
    events: list[EventBase] = []
    stream = client.events("run_1", on_state=states.append)
    async with asyncio.timeout(20):
        async for event in stream:
            events.append(event)
    assert seqs(events) == list(range(1, 31))
    # Every reconnect resumed right after the last event the consumer got.
    assert run.last_event_ids[:4] == [None, "3", "5", "5"]
    assert run.last_event_ids[4] == "8"
    statuses = [s.status for s in states]
    assert statuses[0] == "connecting" and statuses[-1] == "closed"
    assert "reconnecting" in statuses and "live" in statuses
    assert stream.state.status == "closed" and stream.state.last_seq == 30
    stalled = [s for s in states if s.error and "stalled" in s.error]
    assert stalled, "a stall is reported as such"


async def test_reconnecting_state_carries_delay_attempt_and_error(
    server: FakeServer, client: ItoClient
) -> None:
    ScriptedRun(server, n=5, script=[status(503), status(503), drop_mid(2)])
    states: list[ConnectionState] = []
    await collect(client, on_state=states.append)
    reconnecting = [s for s in states if s.status == "reconnecting" and s.retry_in_s is not None]
    # Two fruitless attempts, then a connection that delivered events resets the count.
    assert [s.attempt for s in reconnecting] == [1, 2, 1]
    assert all(0 <= (s.retry_in_s or 0) <= 0.05 for s in reconnecting)
    assert all(s.error for s in reconnecting)


async def test_204_stops_without_events(server: FakeServer, client: ItoClient) -> None:
    run = ScriptedRun(server, n=5, snapshot_state="completed")
    assert await collect(client, since_seq=5) == []
    assert run.last_event_ids == ["5"]


async def test_since_seq_resumes_after_it(server: FakeServer, client: ItoClient) -> None:
    run = ScriptedRun(server, n=6)
    assert seqs(await collect(client, since_seq=2)) == [3, 4, 5, 6]
    assert run.last_event_ids == ["2"]


async def test_close_without_terminal_ends_with_the_snapshot(
    server: FakeServer, client: ItoClient
) -> None:
    """A malformed terminal event: the server closes; the snapshot says the run ended."""
    ScriptedRun(server, n=3)
    ScriptedRun(server, n=2, run_id="run_2", snapshot_state="completed", script=[])

    @server.route("GET", "/v1/runs/run_2/events")
    async def _(req: Received, conn: Conn) -> None:
        if req.headers.get("last-event-id") == "2":
            await conn.send(204, content_type=None)
            return
        await conn.head(200, {"Content-Type": "text/event-stream"})
        await conn.write(sse(1, envelope(1, "run_2"), run_id="run_2"))
        bad = json.dumps({"seq": 2, "run_id": "run_2", "type": "run.completed", "ts": "x"})
        await conn.write(sse(2, bad, run_id="run_2"))
        await conn.end()

    events = await collect(client, "run_2")
    assert seqs(events) == [1, 2, 2]
    assert isinstance(events[1], UnknownEvent) and events[1].type == "invalid:run.completed"
    assert not events[1].terminal
    assert events[2].type == "resync" and getattr(events[2], "data").state == "completed"  # noqa: B009
    # No reconnect: the snapshot said the run ended at the seq already seen.
    assert [
        r.headers.get("last-event-id") for r in server.requests("GET", "/v1/runs/run_2/events")
    ] == [None]


async def test_stall_detected_from_heartbeat(server: FakeServer) -> None:
    server.heartbeat_s = 0.1  # stall = 3 × 0.1 s, with the policy's floor lowered to allow it
    run = ScriptedRun(server, n=4, script=[stall(1)])
    started = time.monotonic()
    policy = StreamPolicy(reconnect_base_s=0.01, reconnect_floor_s=0.01, stall_min_s=0.3)
    states: list[ConnectionState] = []
    async with make_client(server.url, stream=policy) as c:
        events = await collect(c, on_state=states.append)
    assert seqs(events) == [1, 2, 3, 4]
    # The stall was noticed (a second connection within a few stall windows), and the
    # reconnect resumed after what had been yielded when it was noticed: event 1, unless a
    # loaded machine had not read it within the 0.3 s window (then from the start).
    reconnect = next(st for st in states if st.status == "reconnecting")
    assert run.last_event_ids == [None, str(reconnect.last_seq) if reconnect.last_seq else None]
    assert time.monotonic() - started < 3.0


async def test_keepalives_keep_a_quiet_stream_alive(server: FakeServer) -> None:
    server.heartbeat_s = 0.1
    run = ScriptedRun(server, n=3, script=[keepalive_then_normal(1.0, 0.05)])
    async with make_client(
        server.url, stream=StreamPolicy(reconnect_base_s=0.01, reconnect_floor_s=0.01)
    ) as c:
        events = await collect(c)
    assert seqs(events) == [1, 2, 3]
    assert run.last_event_ids == [None], "keepalive comments count as traffic"


async def test_server_retry_field_sets_the_backoff_base(server: FakeServer) -> None:
    run = ScriptedRun(server, n=4, script=[drop_mid(1), drop_mid(1)], retry_ms=40)
    states: list[ConnectionState] = []
    async with make_client(
        server.url, stream=StreamPolicy(stall_timeout_s=1, reconnect_floor_s=0.0)
    ) as c:
        await collect(c, on_state=states.append)
    delays = [s.retry_in_s for s in states if s.retry_in_s is not None]
    assert delays and all(d <= 0.04 for d in delays)
    assert len(run.last_event_ids) == 3


async def test_401_mid_stream_raises_without_retry_loop(
    server: FakeServer, client: ItoClient
) -> None:
    run = ScriptedRun(server, n=10, script=[drop_mid(2), status(401)])
    got: list[EventBase] = []
    stream = client.events("run_1")
    with pytest.raises(AuthError):
        async for event in stream:
            got.append(event)
    assert seqs(got) == [1, 2]
    assert len(run.last_event_ids) == 2
    assert stream.state.status == "closed" and stream.state.error == "HTTP 401"


@pytest.mark.parametrize(
    ("code", "cls"),
    [(404, NotFound), (501, CapabilityMissing), (403, Forbidden), (302, ProtocolError)],
)
async def test_fatal_statuses(
    server: FakeServer, client: ItoClient, code: int, cls: type[Exception]
) -> None:
    run = ScriptedRun(server, n=3, script=[status(code, {"Location": "http://127.0.0.1:1/"})])
    with pytest.raises(cls) as info:
        await collect(client)
    assert len(run.last_event_ids) == 1
    if isinstance(info.value, CapabilityMissing):
        assert info.value.capability == "runs.events"


async def test_missing_capability_checked_before_connecting(server: FakeServer) -> None:
    async def caps(req: Received, conn: Conn) -> None:
        await conn.json(200, capabilities_body(missing=("runs.events",)))

    server.routes[("GET", "/v1/capabilities")] = caps
    run = ScriptedRun(server, n=3)
    async with make_client(server.url) as c:
        with pytest.raises(CapabilityMissing):
            await c.events("run_1")
        with pytest.raises(CapabilityMissing):
            await collect(c)
    assert run.last_event_ids == []


async def test_wrong_content_type_is_a_protocol_error(
    server: FakeServer, client: ItoClient
) -> None:
    @server.route("GET", "/v1/runs/run_1/events")
    async def _(req: Received, conn: Conn) -> None:
        await conn.send(200, b"<html>login portal</html>", content_type="text/html")

    with pytest.raises(ProtocolError) as info:
        await collect(client)
    assert "text/html" in str(info.value)


async def test_huge_line_is_refused_at_the_cap(server: FakeServer) -> None:
    cap = 64 * 1024
    run = ScriptedRun(server, n=3, script=[raw(b"data: " + b"x" * (cap * 4), close=False)])
    policy = StreamPolicy(
        reconnect_base_s=0.01, reconnect_floor_s=0.01, stall_timeout_s=2, max_line_bytes=cap
    )
    async with make_client(server.url, stream=policy) as c:
        with pytest.raises(ProtocolError) as info:
            await collect(c)
    assert info.value.field == "data" and str(cap) in str(info.value)
    assert len(run.last_event_ids) == 1


async def test_many_data_lines_are_capped_too(server: FakeServer) -> None:
    cap = 64 * 1024
    ScriptedRun(server, n=3, script=[raw(b"data: xxxxxxxx\n" * (cap // 8), close=False)])
    policy = StreamPolicy(
        reconnect_base_s=0.01, reconnect_floor_s=0.01, stall_timeout_s=2, max_line_bytes=cap
    )
    async with make_client(server.url, stream=policy) as c:
        with pytest.raises(ProtocolError):
            await collect(c)


async def test_unknown_types_and_fields_are_yielded_raw(
    server: FakeServer, client: ItoClient
) -> None:
    weird = {
        "seq": 2,
        "run_id": "run_1",
        "type": "quantum.entangled",
        "ts": "2026-11-29T12:00:00Z",
        "data": {"spin": "up"},
        "surprise": True,
    }
    ScriptedRun(
        server,
        n=3,
        script=[raw(sse(1) + sse(2, json.dumps(weird)) + sse(3, envelope(3, terminal=True)))],
    )
    events = await collect(client)
    assert seqs(events) == [1, 2, 3]
    assert isinstance(events[1], UnknownEvent) and events[1].type == "quantum.entangled"
    assert events[1].data == {"spin": "up"}


async def test_malformed_events_are_surfaced_not_fatal(
    server: FakeServer, client: ItoClient
) -> None:
    bad_payload = json.dumps(
        {
            "seq": 2,
            "run_id": "run_1",
            "type": "run.state_changed",
            "ts": "2026-11-29T12:00:00Z",
            "data": {"to_state": 42},
        }
    )
    not_json_with_id = "this is {not json"
    no_seq = "neither json nor seq"
    body = (
        sse(1)
        + sse(2, bad_payload)
        + f"id: 3\nevent: stage.progress\ndata: {not_json_with_id}\n\n".encode()
        + f"data: {no_seq}\n\n".encode()
        + sse(4, envelope(4, "run_other"))
        + sse(5, envelope(5, terminal=True))
    )
    ScriptedRun(server, n=5, script=[raw(body)])
    stream = client.events("run_1")
    events = [e async for e in stream]
    assert seqs(events) == [1, 2, 3, 4, 5]
    second, third, fourth = events[1], events[2], events[3]
    assert isinstance(second, UnknownEvent) and second.type == "invalid:run.state_changed"
    assert second.data["field"] == "data.to_state" and "raw" in second.data
    assert isinstance(third, UnknownEvent) and third.type == "invalid:stage.progress"
    assert third.data["raw"] == not_json_with_id
    assert isinstance(fourth, UnknownEvent) and fourth.data["field"] == "run_id"
    assert stream.skipped == 1
    assert events[-1].terminal


async def test_out_of_order_and_duplicate_seqs_never_go_backwards(
    server: FakeServer, client: ItoClient
) -> None:
    order = [1, 2, 2, 4, 3, 1, 5, 5, 6]
    body = b"".join(sse(s, envelope(s, terminal=s == 6)) for s in order)
    ScriptedRun(server, n=6, script=[raw(body)])
    got = seqs(await collect(client))
    assert got == [1, 2, 4, 5, 6]


async def test_resync_reseeds_and_continues_after_snapshot(
    server: FakeServer, client: ItoClient
) -> None:
    snapshot = samples.run(last_event_seq=10, state="running")
    resync = json.dumps(
        {
            "seq": 10,
            "run_id": "run_1",
            "type": "resync",
            "ts": "2026-11-29T12:00:00Z",
            "data": snapshot,
        }
    )
    body = (
        sse(10, resync, event="resync")
        + sse(7)  # stale replay from before the snapshot: dropped
        + sse(11)
        + sse(12, envelope(12, terminal=True))
    )
    ScriptedRun(server, n=12, script=[raw(body)])
    states: list[ConnectionState] = []
    events = await collect(client, since_seq=2, on_state=states.append)
    assert [e.type for e in events] == ["resync", "run.state_changed", "run.completed"]
    assert isinstance(events[0].data, Run)  # type: ignore[attr-defined]
    assert seqs(events) == [10, 11, 12]
    assert "resynced" in [s.status for s in states]


async def test_max_reconnects_bounds_a_dead_backend(server: FakeServer) -> None:
    run = ScriptedRun(server, n=3, script=[status(503)] * 50)
    policy = StreamPolicy(
        reconnect_base_s=0.01, reconnect_floor_s=0.01, reconnect_max_s=0.02, max_reconnects=3
    )
    async with make_client(server.url, stream=policy) as c:
        with pytest.raises(BackendUnavailable):
            await collect(c)
    assert len(run.last_event_ids) == 4


async def test_aclose_releases_the_connection(server: FakeServer, client: ItoClient) -> None:
    ScriptedRun(server, n=10, script=[stall(2)])
    stream = await client.events("run_1")
    first = await stream.__anext__()
    assert first.seq == 1
    await stream.aclose()
    assert stream.state.status == "closed"
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


async def test_events_for_an_unknown_envelope_ts_uses_now(
    server: FakeServer, client: ItoClient
) -> None:
    body = sse(1, json.dumps({"seq": 1, "type": "run.accepted"})) + sse(
        2, envelope(2, terminal=True)
    )
    ScriptedRun(server, n=2, script=[raw(body)])
    events = await collect(client)
    assert isinstance(events[0], UnknownEvent) and events[0].ts > TS


async def test_deeply_nested_event_data_is_surfaced_not_fatal(
    server: FakeServer, client: ItoClient
) -> None:
    deep = '{"seq": 2, "data": ' + "[" * 50_000 + "]" * 50_000 + "}"
    ScriptedRun(
        server, n=3, script=[raw(sse(1) + sse(2, deep) + sse(3, envelope(3, terminal=True)))]
    )
    events = await collect(client)
    assert seqs(events) == [1, 2, 3]
    assert isinstance(events[1], UnknownEvent) and events[1].type.startswith("invalid:")
    assert len(events[1].data["raw"]) <= 4096


def test_a_deeply_nested_message_is_read_off_the_interpreters_stack() -> None:
    """The stdlib's parser recursed to the stack's limit on this message, and a finalizer
    that a garbage collection ran down there failed ("Exception ignored", over the TUI)."""
    deep = '{"seq": 2, "type": "x", "data": ' + "[" * 50_000 + "]" * 50_000 + "}"
    events: list[Any] = []
    message = SSEMessage("message", deep, "2")
    assert not starved_during(lambda: events.append(invalid_event(message, "run_1", "e", None)))
    assert events[0] is not None and events[0].seq == 2 and events[0].type == "invalid:message"


async def test_stream_honours_retry_after_up_to_the_reconnect_cap(
    server: FakeServer, client: ItoClient
) -> None:
    ScriptedRun(
        server,
        n=2,
        script=[status(503, {"Retry-After": "0.03"}), status(429, {"Retry-After": "3600"})],
    )
    states: list[ConnectionState] = []
    await collect(client, on_state=states.append)
    delays = [s.retry_in_s for s in states if s.status == "reconnecting" and s.retry_in_s]
    assert delays == [0.03, 0.05]  # the second is capped at reconnect_max_s


async def test_a_backlog_is_handed_out_in_slices_so_other_tasks_run(server: FakeServer) -> None:
    """A backlog read in one go does not hold the event loop: with `slice_s=0` the stream
    lets other tasks (a UI's key handling) run after every event, and with a slice longer
    than the backlog only between socket reads."""
    n = 400
    run = ScriptedRun(server, n=n)
    backlog = b"".join(run.message(seq) for seq in range(1, n + 1))

    async def all_at_once(req: Received, conn: Conn) -> None:
        await run.open(conn)
        await conn.write(backlog)
        await conn.end()

    server.routes[("GET", "/v1/runs/run_1/events")] = all_at_once

    async def turns_between_events(slice_s: float) -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        policy = StreamPolicy(reconnect_base_s=0.01, reconnect_floor_s=0.01, slice_s=slice_s)
        seen: list[int] = []
        task = asyncio.create_task(ticker())
        try:
            async with make_client(server.url, stream=policy) as c:
                async with asyncio.timeout(20):
                    async for _event in c.events("run_1"):
                        seen.append(ticks)
        finally:
            task.cancel()
        assert len(seen) == n
        return sum(1 for a, b in itertools.pairwise(seen) if b > a)

    assert await turns_between_events(0.0) >= n - 2
    assert await turns_between_events(3600.0) < n // 4, "the backlog did not arrive at once"
