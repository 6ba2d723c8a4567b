"""A scripted job log for the hostile server: one behaviour per connection to `/logs`.

`ScriptedLog` serves `GET /v1/runs/{id}/logs` from lines 1..n (rank = seq % 4, level
info, source trainer), honouring `Last-Event-ID` and `tail` as API.md says (a resume
at or past the end of an ended run: 204), and misbehaving on the connections a test
scripts: drop mid-message, send raw bytes, repeat seqs. `GET /v1/runs/{id}` answers
the run's snapshot (`ended` says whether the run is over). Every request's query and
`Last-Event-ID` are recorded in `asks`. The capabilities offer `runs.logs` (`offering`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support import caps

from . import samples
from .fakeserver import Conn, FakeServer, Received
from .sserun import SSE_HEADERS

Behaviour = Callable[["ScriptedLog", Conn, int], Awaitable[None]]


def line_body(seq: int, **fields: Any) -> dict[str, Any]:
    body = {
        "seq": seq,
        "ts": samples.TS,
        "rank": seq % 4,
        "node": f"b200-16n-ib-{seq % 4:02d}",
        "level": "info",
        "source": "trainer",
        "text": f"step: {seq}  loss:  3.2154",
    }
    return {**body, **fields}


def message(seq: int, data: str | bytes | None = None, *, event: str = "log") -> bytes:
    """One SSE message, `id: seq`, carrying `data` (the JSON of line `seq` by default)."""
    payload = data if data is not None else json.dumps(line_body(seq))
    raw = payload.encode() if isinstance(payload, str) else payload
    return f"id: {seq}\nevent: {event}\n".encode() + b"data: " + raw + b"\n\n"


def offering(*names: str, heartbeat_s: float = 0.2) -> Callable[[Received, Conn], Awaitable[None]]:
    """A capabilities route offering desk_sim's names and `names` (v1.1's, whoever adds them)."""
    body = caps.capabilities_body(
        *caps.CAPABILITY_NAMES, *names, server="fake", heartbeat_s=heartbeat_s
    )

    async def route(req: Received, conn: Conn) -> None:
        await conn.json(200, body)

    return route


@dataclass
class Ask:
    query: dict[str, list[str]]
    last_event_id: str | None


@dataclass
class ScriptedLog:
    server: FakeServer
    n: int = 10
    run_id: str = "run_1"
    ended: bool = True
    script: list[Behaviour] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    retry_ms: int = 10

    def __post_init__(self) -> None:
        self.server.routes[("GET", "/v1/capabilities")] = offering("runs.logs")
        self.server.routes[("GET", f"/v1/runs/{self.run_id}/logs")] = self.handle
        self.server.routes[("GET", f"/v1/runs/{self.run_id}")] = self.snapshot

    async def snapshot(self, req: Received, conn: Conn) -> None:
        state = "completed" if self.ended else "running"
        await conn.json(200, samples.run(self.run_id, 99, state))

    async def handle(self, req: Received, conn: Conn) -> None:
        index = len(self.asks)
        lei = req.headers.get("last-event-id")
        self.asks.append(Ask(req.query, lei))
        if lei:
            after = int(lei)
        else:
            tail = int(req.query.get("tail", ["200"])[0])
            after = max(self.n - tail, 0)
        behaviour = self.script[index] if index < len(self.script) else normal()
        await behaviour(self, conn, after)

    async def open(self, conn: Conn) -> None:
        await conn.head(200, SSE_HEADERS)
        await conn.write(f"retry: {self.retry_ms}\n\n".encode())


def normal() -> Behaviour:
    """Every line after `after`, then close; 204 for an ended run with nothing left."""

    async def run(log: ScriptedLog, conn: Conn, after: int) -> None:
        if after >= log.n and log.ended:
            await conn.send(204, content_type=None)
            return
        await log.open(conn)
        for seq in range(after + 1, log.n + 1):
            await conn.write(message(seq))
        await conn.end()

    return run


def drop_mid(k: int) -> Behaviour:
    """k lines, half of the next one, then reset the connection."""

    async def run(log: ScriptedLog, conn: Conn, after: int) -> None:
        await log.open(conn)
        for seq in range(after + 1, after + k + 1):
            await conn.write(message(seq))
        nxt = message(after + k + 1)
        await conn.write(nxt[: len(nxt) // 2])
        await asyncio.sleep(0.02)
        conn.abort()

    return run


def raw(*chunks: bytes, close: bool = True) -> Behaviour:
    """These bytes after the `retry:` field, then close (or stay open and quiet)."""

    async def run(log: ScriptedLog, conn: Conn, after: int) -> None:
        await log.open(conn)
        for chunk in chunks:
            await conn.write(chunk)
        if close:
            await conn.end()
        else:
            await asyncio.sleep(3600)

    return run


def status(code: int, body: dict[str, Any] | None = None) -> Behaviour:
    """Answer `code` (with a problem+json `body` when given)."""

    async def run(log: ScriptedLog, conn: Conn, after: int) -> None:
        if body is None:
            await conn.send(code, content_type=None)
        else:
            await conn.problem(code, **body)

    return run
