"""A scripted event stream for the hostile server: one behaviour per connection.

`ScriptedRun` serves `GET /v1/runs/{id}/events` from a fixed list of events
(seq 1..n, the last one terminal), honouring `Last-Event-ID` like API.md says,
and misbehaving on the connections a test scripts: drop mid-message, stall,
answer an error status, replay old events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from . import samples
from .conftest import envelope, sse
from .fakeserver import Conn, FakeServer, Received

Behaviour = Callable[["ScriptedRun", Conn, int], Awaitable[None]]
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


@dataclass
class ScriptedRun:
    server: FakeServer
    n: int = 20
    run_id: str = "run_1"
    script: list[Behaviour] = field(default_factory=list)
    last_event_ids: list[str | None] = field(default_factory=list)
    retry_ms: int = 10
    snapshot_state: str = "running"
    """What `GET /v1/runs/{id}` says (the stream re-reads it when it ends early)."""

    def __post_init__(self) -> None:
        self.server.routes[("GET", f"/v1/runs/{self.run_id}/events")] = self.handle
        self.server.routes[("GET", f"/v1/runs/{self.run_id}")] = self.snapshot

    async def snapshot(self, req: Received, conn: Conn) -> None:
        await conn.json(200, samples.run(self.run_id, self.n, self.snapshot_state))

    def message(self, seq: int) -> bytes:
        return sse(seq, envelope(seq, self.run_id, terminal=seq == self.n), run_id=self.run_id)

    async def handle(self, req: Received, conn: Conn) -> None:
        index = len(self.last_event_ids)
        lei = req.headers.get("last-event-id")
        self.last_event_ids.append(lei)
        after = int(lei) if lei else 0
        behaviour = self.script[index] if index < len(self.script) else normal()
        await behaviour(self, conn, after)

    async def open(self, conn: Conn) -> None:
        await conn.head(200, SSE_HEADERS)
        await conn.write(f"retry: {self.retry_ms}\n\n".encode())


def normal() -> Behaviour:
    """Everything after Last-Event-ID, then close (204 once nothing is left)."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        if after >= script.n:
            await conn.send(204, content_type=None)
            return
        await script.open(conn)
        for seq in range(after + 1, script.n + 1):
            await conn.write(script.message(seq))
        await conn.end()

    return run


def drop_mid(k: int) -> Behaviour:
    """Send k events, half of the next one, then reset the connection."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await script.open(conn)
        for seq in range(after + 1, min(after + k, script.n) + 1):
            await conn.write(script.message(seq))
        nxt = script.message(min(after + k + 1, script.n))
        await conn.write(nxt[: len(nxt) // 2])
        await asyncio.sleep(0.02)
        conn.abort()

    return run


def clean_close(k: int) -> Behaviour:
    """Send k events and end the body properly, without a terminal event."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await script.open(conn)
        for seq in range(after + 1, min(after + k, script.n) + 1):
            await conn.write(script.message(seq))
        await conn.end()

    return run


def stall(k: int, keepalive_s: float | None = None) -> Behaviour:
    """Send k events, then nothing (or only keepalive comments) while the socket stays open."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await script.open(conn)
        for seq in range(after + 1, min(after + k, script.n) + 1):
            await conn.write(script.message(seq))
        for _ in range(100_000):
            if keepalive_s is None:
                await asyncio.sleep(3600)
            await asyncio.sleep(keepalive_s)
            await conn.write(b": keepalive\n\n")

    return run


def keepalive_then_normal(seconds: float, interval: float) -> Behaviour:
    """Only keepalive comments for `seconds`, then everything."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await script.open(conn)
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        while loop.time() < until:
            await conn.write(b": keepalive\n\n")
            await asyncio.sleep(interval)
        for seq in range(after + 1, script.n + 1):
            await conn.write(script.message(seq))
        await conn.end()

    return run


def replay_from(first: int, k: int) -> Behaviour:
    """Replay from `first` (or from Last-Event-ID, if that is earlier): k events, then close.

    Seqs at or before Last-Event-ID are duplicates; it never skips a seq the
    client has not had (a gap no client could detect).
    """

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await script.open(conn)
        start = min(first, after + 1)
        for seq in range(start, min(start + k, script.n + 1)):
            await conn.write(script.message(seq))
        await conn.end()

    return run


def status(code: int, headers: dict[str, str] | None = None, **extra: object) -> Behaviour:
    """Answer with a problem+json of status `code`."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await conn.problem(code, "x", f"HTTP {code}", headers=headers, **extra)

    return run


def raw(data: bytes, *, close: bool = True) -> Behaviour:
    """Open the stream and write `data` verbatim."""

    async def run(script: ScriptedRun, conn: Conn, after: int) -> None:
        await script.open(conn)
        await conn.write(data)
        if close:
            await conn.end()

    return run
