"""`ItoClient.logs`: the job log, every line once and in order, against a scripted server.

The server (`logsrv.ScriptedLog`) is a real HTTP peer on 127.0.0.1 that drops, repeats,
goes backwards, lies about filters and ends the stream the ways API.md allows.
"""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest
from pydantic import SecretStr

from ito_tui.client import (
    CapabilityMissing,
    ConnectionState,
    ItoClient,
    StreamPolicy,
    ValidationFailed,
)
from ito_tui.client.logstream import LogStream
from ito_tui.contract import LogLine, LogTruncated

from . import logsrv
from .conftest import make_client
from .fakeserver import Conn, FakeServer, Received, capabilities_body
from .logsrv import ScriptedLog, drop_mid, message, raw, status


async def collect(stream: LogStream) -> list[LogLine | LogTruncated]:
    return [item async for item in stream]


def seqs(items: list[LogLine | LogTruncated]) -> list[int]:
    return [item.seq for item in items if isinstance(item, LogLine)]


async def test_a_drop_mid_line_resumes_once_after_the_last_whole_line(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=10, script=[drop_mid(4)])
    stream = client.logs("run_1", tail=None, since_seq=0)
    items = await collect(stream)
    assert seqs(items) == list(range(1, 11))
    # One resume after the drop (at the last whole line), one after the clean close: 204.
    assert [a.last_event_id for a in log.asks] == ["0", "4", "10"]
    assert stream.state.status == "closed"
    assert stream.last_seq == 10


async def test_filters_go_on_every_connection_and_tail_only_on_the_first(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=8, script=[drop_mid(2)])
    stream = client.logs(
        "run_1", tail=6, ranks=[1, 2, 3, 0], level="info", sources=["trainer"], q="loss"
    )
    await collect(stream)
    first, *rest = [a.query for a in log.asks]
    filters = {"rank": ["1", "2", "3", "0"], "level": ["info"], "source": ["trainer"]}
    assert first == {**filters, "q": ["loss"], "tail": ["6"]}
    assert rest and all(q == {**filters, "q": ["loss"]} for q in rest)
    assert [a.last_event_id for a in log.asks][1:] == ["4", "8"]


async def test_before_any_line_a_reconnect_asks_for_live_lines_only(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=3, ended=False, script=[raw(), raw(message(1), close=False)])
    async with client.logs("run_1", tail=50) as stream:
        first = await stream.__anext__()
    assert isinstance(first, LogLine) and first.seq == 1
    assert log.asks[0].query == {"tail": ["50"]}
    assert log.asks[1].query == {"tail": ["0"]}
    assert log.asks[1].last_event_id is None


async def test_duplicate_and_backwards_seqs_are_dropped_and_counted(
    server: FakeServer, client: ItoClient
) -> None:
    burst = b"".join(message(s) for s in (1, 2, 2, 3, 1, 4, 3, 5))
    ScriptedLog(server, n=5, script=[raw(burst)])
    stream = client.logs("run_1")
    items = await collect(stream)
    assert seqs(items) == [1, 2, 3, 4, 5]
    assert stream.stale == 3
    assert "not after" in (stream.problem or "")


async def test_a_line_that_does_not_match_the_filters_is_never_yielded(
    server: FakeServer, client: ItoClient
) -> None:
    # Asked for rank 1 at warning and above: the server sends every line (rank seq % 4, info).
    wrong_level = json.dumps(logsrv.line_body(5, level="info"))
    right = json.dumps(logsrv.line_body(9, level="error"))
    other_rank = json.dumps(logsrv.line_body(10, level="error"))
    burst = message(5, wrong_level) + message(9, right) + message(10, other_rank)
    ScriptedLog(server, n=9, script=[raw(burst)])
    stream = client.logs("run_1", ranks=[1], level="warning")
    items = await collect(stream)
    assert seqs(items) == [9]
    assert stream.skipped == 2
    assert "does not match the filter" in (stream.problem or "")


async def test_an_id_that_differs_from_the_lines_seq_is_refused(
    server: FakeServer, client: ItoClient
) -> None:
    forged = b"id: 7\nevent: log\ndata: " + json.dumps(logsrv.line_body(3)).encode() + b"\n\n"
    ScriptedLog(server, n=8, script=[raw(forged + message(8))])
    stream = client.logs("run_1")
    assert seqs(await collect(stream)) == [8]
    assert stream.skipped == 1


async def test_log_truncated_is_yielded_and_the_resume_starts_after_it(
    server: FakeServer, client: ItoClient
) -> None:
    gap = b'id: 6\nevent: log.truncated\ndata: {"dropped": 6}\n\n'
    log = ScriptedLog(server, n=9, script=[raw(gap + message(7))])
    items = await collect(client.logs("run_1", since_seq=0))
    assert items[0] == LogTruncated(dropped=6)
    assert seqs(items) == [7, 8, 9]
    assert [a.last_event_id for a in log.asks] == ["0", "7", "9"]


async def test_a_log_truncated_that_is_not_a_count_is_dropped_and_counted(
    server: FakeServer, client: ItoClient
) -> None:
    bad = b'event: log.truncated\ndata: {"dropped": -3}\n\n'
    worse = b'event: log.truncated\ndata: {"dropped": "many"}\n\n'
    ScriptedLog(server, n=2, script=[raw(bad + worse + message(1) + message(2))])
    stream = client.logs("run_1")
    assert await collect(stream) == [LogLine.model_validate(logsrv.line_body(s)) for s in (1, 2)]
    assert stream.skipped == 2


async def test_a_resume_past_the_end_answered_204_ends_at_once(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=5)
    items = await collect(client.logs("run_1", since_seq=5))
    assert items == []
    assert len(log.asks) == 1


async def test_an_ended_run_whose_tail_matched_nothing_ends_after_one_close(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=5, script=[raw()])
    assert await collect(client.logs("run_1")) == []
    assert len(log.asks) == 1


async def test_a_server_that_never_says_204_ends_after_one_empty_resume(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=3, script=[raw(message(1), message(2)), raw(), raw(), raw()])
    assert seqs(await collect(client.logs("run_1"))) == [1, 2]
    assert len(log.asks) == 2


async def test_501_on_the_stream_is_a_capability_missing_naming_runs_logs(
    server: FakeServer, client: ItoClient
) -> None:
    refusal = {"code": "capability.not_implemented", "capability": "runs.logs"}
    ScriptedLog(server, script=[status(501, refusal)])
    with pytest.raises(CapabilityMissing) as caught:
        await collect(client.logs("run_1"))
    assert caught.value.capability == "runs.logs"


async def test_a_backend_without_runs_logs_is_never_asked(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server)

    @server.route("GET", "/v1/capabilities")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, capabilities_body(missing=("runs.logs",)))

    with pytest.raises(CapabilityMissing) as caught:
        await client.logs("run_1")
    assert caught.value.capability == "runs.logs"
    assert log.asks == []


def test_a_filter_that_is_not_valid_is_refused_before_any_request(client: ItoClient) -> None:
    with pytest.raises(ValidationFailed, match="level must be one of"):
        client.logs("run_1", level="verbose")
    with pytest.raises(ValidationFailed, match="rank"):
        client.logs("run_1", ranks=[-1])
    with pytest.raises(ValidationFailed, match="tail"):
        client.logs("run_1", tail=-5)


async def test_a_line_without_an_event_field_is_read_and_unknown_types_are_ignored(
    server: FakeServer, client: ItoClient
) -> None:
    plain = f"id: 1\ndata: {json.dumps(logsrv.line_body(1))}\n\n".encode()
    ScriptedLog(server, n=3, script=[raw(plain + message(2, event="log.future") + message(3))])
    stream = client.logs("run_1")
    assert seqs(await collect(stream)) == [1, 3]
    assert stream.skipped == 0


async def test_a_drop_before_the_first_line_asks_for_the_same_tail_again(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=9, script=[drop_mid(0)])
    assert seqs(await collect(client.logs("run_1", tail=5))) == [5, 6, 7, 8, 9]
    assert [a.query for a in log.asks[:2]] == [{"tail": ["5"]}, {"tail": ["5"]}]
    assert [a.last_event_id for a in log.asks] == [None, None, "9"]


async def test_a_burst_of_lines_is_handed_out_in_slices_so_other_tasks_run(
    server: FakeServer,
) -> None:
    """A log flood read in one go does not hold the event loop (a UI's keys): with
    `slice_s=0` other tasks run between every two lines, with a long slice rarely."""
    n = 400
    ScriptedLog(server, n=n, script=[raw(b"".join(message(s) for s in range(1, n + 1)))] * 2)

    async def turns_between_lines(slice_s: float) -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        policy = StreamPolicy(reconnect_base_s=0.01, reconnect_floor_s=0.0, slice_s=slice_s)
        seen: list[int] = []
        task = asyncio.create_task(ticker())
        try:
            async with make_client(server.url, stream=policy) as c:
                async for _line in c.logs("run_1", tail=n):
                    seen.append(ticks)
                    if len(seen) == n:
                        break
        finally:
            task.cancel()
        return sum(1 for a, b in itertools.pairwise(seen) if b > a)

    assert await turns_between_lines(0.0) >= n - 2
    assert await turns_between_lines(3600.0) < n // 4, "the burst did not arrive at once"


async def test_after_the_runs_end_the_last_request_waits_only_the_floor(
    server: FakeServer,
) -> None:
    """`ito-tui logs --follow` exits soon after the run: the 204 is asked for after the 1 s
    floor, not after a backoff drawn up to the server's `retry:` (3 s here)."""
    ScriptedLog(server, n=3, retry_ms=3000)
    states: list[ConnectionState] = []
    async with ItoClient(server.url, token=SecretStr("t")) as c:
        got = [item async for item in c.logs("run_1", on_state=states.append)]
    assert len(got) == 3
    waits = [s.retry_in_s for s in states if s.status == "reconnecting" and s.retry_in_s]
    assert waits == [1.0]


async def test_tail_none_leaves_the_replay_to_the_servers_default(
    server: FakeServer, client: ItoClient
) -> None:
    log = ScriptedLog(server, n=250)
    got = await collect(client.logs("run_1", tail=None))
    assert log.asks[0].query == {}
    assert seqs(got) == list(range(51, 251))  # the scripted server's default: 200


async def test_a_log_history_that_went_backwards_is_named(
    server: FakeServer, client: ItoClient
) -> None:
    """The backend was restored from a backup: resumed at seq 10, its log now ends at 5."""
    restored = raw(*(message(s) for s in range(1, 6)), close=False)
    ScriptedLog(server, n=10, ended=False, script=[drop_mid(10), restored])

    @server.route("GET", "/v1/runs/run_1/logs/page")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"items": [logsrv.line_body(5)], "next_before_seq": 4})

    stream = client.logs("run_1", since_seq=0)
    got = [await stream.__anext__() for _ in range(10)]
    assert seqs(got) == list(range(1, 11))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await stream.__anext__()
    await stream.aclose()
    assert stream.stale == 5
    assert "log went backwards from seq 10 to 5" in (stream.problem or "")
    assert len(server.requests("GET", "/v1/runs/run_1/logs/page")) == 1
