"""#11 desk_sim fan-out: lag from event commit to the last of 100 SSE watchers, vs 1 watcher.

Watchers are raw asyncio sockets (HTTP/1.0, so no chunked framing) in one
process, each timestamping every chunk as it arrives; an event's lag is the
latest arrival among the watchers minus its `ts` (the simulator's wall clock
when it was committed, ms precision). Rounds alternate 1 and 100 watchers on
the same live run, each joining at the run's current seq (no replay).
"""

from __future__ import annotations

import asyncio
import re
import time
from datetime import datetime
from urllib.parse import urlsplit

from .context import Backend, Context, backend
from .live import cancel_run, create_run, get_run, wait_stage
from .record import Record
from .stats import percentile, summary

SPEED = 3000.0
"""desk_sim's time scale: fast enough for a steady stream of events during pretrain."""
_ID = re.compile(rb"^id: ?(\d+)", re.M)
_TS = re.compile(rb'"seq":(\d+),"run_id":"[^"]*","type":"[^"]*","ts":"([^"]+)"')


async def _watch(
    be: Backend, run_id: str, since: int, arrivals: dict[int, float], ts: dict[int, float],
    stop: asyncio.Event,
) -> None:  # fmt: skip
    url = urlsplit(be.url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        (
            f"GET /v1/runs/{run_id}/events HTTP/1.0\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {be.token}\r\nAccept: text/event-stream\r\n"
            f"Last-Event-ID: {since}\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    tail = b""
    try:
        while not stop.is_set():
            try:
                chunk = await asyncio.wait_for(reader.read(1 << 16), 0.5)
            except TimeoutError:
                continue
            now = time.time()
            if not chunk:
                break
            # sse-starlette ends lines with CRLF; a CR split from its LF rejoins via `tail`.
            data = (tail + chunk).replace(b"\r\n", b"\n")
            cut = data.rfind(b"\n\n")
            if cut == -1:
                tail = data
                continue
            done, tail = data[: cut + 2], data[cut + 2 :]
            for m in _ID.finditer(done):
                arrivals.setdefault(int(m.group(1)), now)
            for m in _TS.finditer(done):
                seq = int(m.group(1))
                if seq not in ts:
                    stamp = m.group(2).decode().replace("Z", "+00:00")
                    ts[seq] = datetime.fromisoformat(stamp).timestamp()
    finally:
        writer.close()


async def _round(be: Backend, run_id: str, watchers: int, seconds: float) -> list[float]:
    since = int(get_run(be, run_id)["last_event_seq"])
    stop = asyncio.Event()
    arrivals: list[dict[int, float]] = [{} for _ in range(watchers)]
    ts: dict[int, float] = {}
    tasks = [
        asyncio.create_task(_watch(be, run_id, since, arrivals[i], ts, stop))
        for i in range(watchers)
    ]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    lags = []
    for seq, t in ts.items():
        got = [a.get(seq) for a in arrivals]
        if all(g is not None for g in got):
            lags.append(max(g for g in got if g is not None) - t)
    return lags


def run(ctx: Context) -> list[Record]:
    rounds = ctx.count(5, 1)
    seconds = ctx.pick(8.0, 3.0)
    p99: dict[int, list[float]] = {1: [], 100: []}
    counts: dict[int, int] = {1: 0, 100: 0}
    with backend(speed=SPEED, scenario="happy") as be:
        run_id = ""
        for r in range(rounds):
            # A fresh run per round, in pretrain (a steady stream of telemetry); the last
            # one is cancelled first so only one run makes events.
            if run_id:
                cancel_run(be, run_id)
            run_id = create_run(be)
            wait_stage(be, run_id, "pretrain", timeout=60)
            for n in (1, 100) if r % 2 == 0 else (100, 1):
                lags = asyncio.run(_round(be, run_id, n, seconds))
                if not lags:
                    ctx.log(f"round {r + 1}: {n} watcher(s) saw no event")
                    continue
                p99[n].append(1000 * percentile(lags, 99))
                counts[n] += len(lags)
                ctx.log(
                    f"round {r + 1}/{rounds}: {n:3} watcher(s), {len(lags)} events, lag p50 "
                    f"{1000 * percentile(lags, 50):.0f} ms p99 {1000 * percentile(lags, 99):.0f} ms"
                )
    v, b = summary(p99[100]), summary(p99[1])
    return [
        Record(
            11,
            "fanout",
            "desk_sim lag to the 100th SSE watcher, p99",
            "ms",
            "p99 ≤ 250 ms",
            v,
            b,
            "1 watcher, p99",
            ratio=v["median"] / b["median"] if b["runs"] and b["median"] else None,
            met=bool(v["runs"]) and v["median"] <= 250,
            notes=[
                f"{rounds} alternating rounds of {seconds:.0f} s at --speed {SPEED:g}; "
                f"{counts[100]} events at 100 watchers, {counts[1]} at 1; lag = last arrival − ts"
            ],
        )
    ]
