"""Scenario `log-flood`: >= 10,000 debug lines a second from every rank, streamed live."""

from __future__ import annotations

import itertools
import json
import time
from datetime import timedelta
from typing import Any

import httpx
import pytest

from ito_tui.contract import LogLine

from .helpers import Message, create_run, key, sse_messages, wait_for
from .logs_support import lines_of, read_logs

WINDOW = timedelta(seconds=1)


def _spans_enough(messages: list[Message]) -> bool:
    """Stop reading once the lines cover 1.5 s of the server's clock (or 60,000 lines)."""
    if len(messages) >= 60_000:
        return True
    if len(messages) % 500:
        return False
    first = LogLine.model_validate_json(messages[0].data).ts
    last = LogLine.model_validate_json(messages[-1].data).ts
    return last - first >= WINDOW * 1.5


def test_log_flood_streams_at_least_ten_thousand_lines_a_second_from_every_rank(
    sim_factory: Any,
) -> None:
    # Slow enough that the run outlives the measurement; cancelled at the end.
    sim = sim_factory(scenario="log-flood", speed=20_000.0)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        status, messages = read_logs(client, rid, params={"tail": 0}, until=_spans_enough)
        assert status == 200
        lines = lines_of(messages)
        assert client.post(f"/v1/runs/{rid}/cancel", headers=key()).status_code == 202
        wait_for(client, rid, lambda r: r["state"] == "cancelled")
    # A window of the server's own clock, a little after the stream began.
    start = lines[0].ts + timedelta(seconds=0.2)
    window = [x for x in lines if start <= x.ts < start + WINDOW]
    tenths = [sum(1 for x in window if int((x.ts - start) / (WINDOW / 10)) == i) for i in range(10)]
    assert len(window) >= 10_000, tenths
    flood = [x for x in window if x.level == "debug"]
    assert len(flood) >= 10_000
    world = run["plan"]["world_size"]
    assert {x.rank for x in flood} == set(range(world))
    assert {x.source for x in flood} == {"nccl", "dataloader", "trainer"}
    assert all(x.text.startswith(f"[rank{x.rank}]:") for x in flood)
    assert [x.seq for x in lines] == list(range(lines[0].seq, lines[0].seq + len(lines)))
    assert all(a.ts <= b.ts for a, b in itertools.pairwise(lines))
    assert all(a.sim_ts and b.sim_ts and a.sim_ts <= b.sim_ts for a, b in itertools.pairwise(lines))


def test_a_reader_overtaken_by_retention_is_told_what_it_lost_and_goes_on(
    sim_factory: Any,
) -> None:
    sim = sim_factory(scenario="log-flood", speed=20_000.0, log_retention=500)
    got: list[Message] = []
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        with client.stream("GET", f"/v1/runs/{rid}/logs", params={"tail": 0},
                           timeout=30) as response:  # fmt: skip
            messages = sse_messages(response)
            for message in messages:
                if message.event is None:
                    continue
                got.append(message)
                if len(got) == 10:
                    # Stop reading while the flood writes 36,000 lines: more than the
                    # socket buffers hold, far more than the 500 the server keeps. Counted,
                    # not timed: a loaded machine's flood writes fewer lines a second.
                    read = int(message.id or 0)  # a line's seq, or a notice's resume point
                    deadline = time.monotonic() + 60
                    while _last_seq(client, rid) < read + 36_000:
                        assert time.monotonic() < deadline, "the flood stalled"
                        time.sleep(0.2)
                late = len(got) > 10  # (one may come first: the flood outran the connect)
                if (late and message.event == "log.truncated") or len(got) > 200_000:
                    break
            nxt = next(m for m in messages if m.event)
        assert client.post(f"/v1/runs/{rid}/cancel", headers=key()).status_code == 202
    notice = got[-1]
    assert notice.event == "log.truncated"
    before = LogLine.model_validate_json(got[-2].data)
    dropped = json.loads(notice.data)["dropped"]
    assert dropped > 0 and int(notice.id or 0) == before.seq + dropped
    after = LogLine.model_validate_json(nxt.data)
    assert nxt.event == "log" and after.seq == int(notice.id or 0) + 1


def test_a_follower_that_hangs_up_mid_replay_is_let_go(
    sim_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    sim = sim_factory(scenario="log-flood", speed=60.0)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        # Let a backlog of ~30,000 lines build up (the wait is set-up, not a measurement).
        wait_for(client, rid, lambda _run: _last_seq(client, rid) > 30_000, timeout=20)
        with client.stream("GET", f"/v1/runs/{rid}/logs", params={"since_seq": 0}) as response:
            next(response.iter_bytes())  # the first chunk, then hang up mid-replay
        assert client.get(f"/v1/runs/{rid}").status_code == 200  # the loop serves others
        assert client.post(f"/v1/runs/{rid}/cancel", headers=key()).status_code == 202
    # A stream that never let the loop run would write its whole backlog into the closed
    # socket (asyncio warns on every write past the fifth).
    lost = [r for r in caplog.records if "socket.send() raised exception" in r.getMessage()]
    assert len(lost) < 10


def _last_seq(client: httpx.Client, rid: str) -> int:
    items = client.get(f"/v1/runs/{rid}/logs/page", params={"limit": 1}).json()["items"]
    return int(items[-1]["seq"]) if items else 0
