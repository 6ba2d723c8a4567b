"""A small hostile HTTP/1.1 server on 127.0.0.1 for client tests.

Raw asyncio in a background thread (not a mock transport), so every byte the
client sees really crossed a loopback socket, and the server can do what a
framework would not: close a stream mid-message, stall, drip, lie about
lengths. Handlers are `async def handler(req, conn)`; each request is
recorded in `server.received` (method, path, query, headers, body) so tests
assert on what the backend actually got.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support import caps


def capabilities_body(
    heartbeat_s: float = 0.2, missing: tuple[str, ...] = (), mode: str = "production"
) -> dict[str, Any]:
    """A valid Capabilities document (the tests' one factory); names in `missing` are
    `not_implemented`."""
    return caps.capabilities_body(
        missing=missing,
        mode=mode,
        server="fake",
        heartbeat_s=heartbeat_s,
        max_budget_usd="100000.00",
        event_retention=1000,
    )


@dataclass
class Received:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


class Conn:
    """The server side of one request: write a response, or misbehave."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self._chunked = False

    async def head(
        self, status: int, headers: dict[str, str] | None = None, *, chunked: bool = True
    ) -> None:
        """Send a status line and headers; the body follows via `write` (chunked by default)."""
        self._chunked = chunked
        lines = [f"HTTP/1.1 {status} X"]
        hdrs = {"Connection": "close", **(headers or {})}
        if chunked:
            hdrs["Transfer-Encoding"] = "chunked"
        lines += [f"{k}: {v}" for k, v in hdrs.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await self.writer.drain()

    async def write(self, data: bytes) -> None:
        if self._chunked:
            data = f"{len(data):x}\r\n".encode() + data + b"\r\n"
        self.writer.write(data)
        await self.writer.drain()

    async def end(self) -> None:
        """Finish a chunked body properly."""
        if self._chunked:
            self.writer.write(b"0\r\n\r\n")
            await self.writer.drain()

    def abort(self) -> None:
        """Drop the connection at once (RST), mid-whatever."""
        self.writer.transport.abort()

    async def send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        content_type: str | None = "application/json",
    ) -> None:
        hdrs = dict(headers or {})
        if content_type:
            hdrs.setdefault("Content-Type", content_type)
        hdrs.setdefault("Content-Length", str(len(body)))
        await self.head(status, hdrs, chunked=False)
        await self.write(body)

    async def json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        await self.send(status, json.dumps(obj).encode(), headers)

    async def problem(
        self,
        status: int,
        code: str,
        title: str = "Problem",
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        body = {"type": "about:blank", "title": title, "status": status, "code": code, **extra}
        await self.send(
            status, json.dumps(body).encode(), headers, content_type="application/problem+json"
        )


Handler = Callable[[Received, Conn], Awaitable[None]]


@dataclass
class FakeServer:
    """Routes `(method, path)` to handlers; unrouted requests get 404 problem+json."""

    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    connections: int = 0
    port: int = 0
    heartbeat_s: float = 0.2
    tls: ssl.SSLContext | None = None
    """Serve https with this context (url then starts with https://)."""

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

        async def caps(req: Received, conn: Conn) -> None:
            await conn.json(200, capabilities_body(self.heartbeat_s))

        self.routes.setdefault(("GET", "/v1/capabilities"), caps)

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def route(self, method: str, path: str) -> Callable[[Handler], Handler]:
        """Decorator: `@server.route("GET", "/v1/whoami")`."""

        def deco(handler: Handler) -> Handler:
            self.routes[(method, path)] = handler
            return handler

        return deco

    def requests(self, method: str, path: str) -> list[Received]:
        return [r for r in self.received if r.method == method and r.path == path]

    def start(self) -> FakeServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(timeout=5)
        return self

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        async def _stop() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.sleep(0)

        asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            req = await self._read_request(reader)
            if req is None:
                return
            self.received.append(req)
            handler = self.routes.get((req.method, req.path))
            conn = Conn(writer)
            if handler is None:
                await conn.problem(404, "not_found", "Not found")
            else:
                await handler(req, conn)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except asyncio.CancelledError:
            return  # server shutting down: end the handler quietly
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Received | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        parts = urlsplit(target)
        return Received(method, parts.path, parse_qs(parts.query), headers, body)
