"""A hostile backend built on the real one: desk_sim behind an ASGI layer that misbehaves.

`Tamper(create_app(config))` is served on 127.0.0.1 by the `serve_asgi` fixture, so
every request is real HTTP and every answer not tampered with is desk_sim's own.
Per test it can:

- `revoke()` the token: every later request (except capabilities) gets 401
  `auth.invalid`, as if an administrator revoked it mid-session;
- `revoke_after_events(n)`: end the event stream after `n` events and revoke;
- `break_json(pattern, fn, methods)`: rewrite the JSON body of answers to `methods`
  (default `GET`) on paths matching `pattern` (a regex) with `fn(obj) -> obj`, e.g. to
  give a field the wrong type or answer about another object (error bodies included);
- `rewrite_headers(fn, pattern)`: rewrite the raw header list of every answer on paths
  matching `pattern` with `fn(headers) -> headers`, bytes as they go on the wire (what a
  proxy or CDN in front adds: non-ASCII, control bytes, duplicates, huge values);
- `poison(fn)`: rewrite every JSON body and every SSE `data:` envelope with `fn`;
- `event_hook(fn)`: rewrite each SSE envelope (dict) before it is sent;
- `burst(n, make, when)`: the first envelope `when` picks becomes `n` events at once
  (`make(envelope)`, consecutive seqs); later seqs are shifted to make room (see `burst`).
- `answer(pattern, fn)`: answer the i-th GET on paths matching `pattern` with
  `fn(i) -> (status, headers)` instead of desk_sim (a 204, a 429 with `Retry-After`…),
  or pass it through when `fn` returns None;
- `sse_retry(ms)`: rewrite the stream's `retry:` field; `flap(after_s)`: end every
  event stream cleanly at the first message boundary `after_s` seconds after it opened
  (a load balancer that keeps closing it).

`requests` records `(method, path, t)` of everything that arrived, so tests can
prove that a client stopped asking (no retry loop).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

Rewrite = Callable[[Any], Any]
Answer = Callable[[int], "tuple[int, dict[str, str]] | None"]
RawHeaders = list[tuple[bytes, bytes]]

PROBLEM_401 = {
    "type": "about:blank",
    "title": "Not authenticated",
    "status": 401,
    "detail": "token revoked",
    "code": "auth.invalid",
    "request_id": "req_tamper",
}


class Tamper:
    """ASGI wrapper around a desk_sim app (see module docstring)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.revoked_at: float | None = None
        self.requests: list[tuple[str, str, float]] = []
        self._breaks: list[tuple[re.Pattern[str], Rewrite, tuple[str, ...]]] = []
        self._header_rewrites: list[tuple[re.Pattern[str], Callable[[RawHeaders], RawHeaders]]] = []
        self._poison: Rewrite | None = None
        self.hook_fn: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self.revoke_after: int | None = None
        self.events_sent = 0
        self._answers: list[tuple[re.Pattern[str], Answer, list[int], tuple[str, ...]]] = []
        self.retry_hint: int | str | None = None
        self.flap_after_s: float | None = None
        self.flaps = 0
        """Event streams ended by `flap`."""
        self.pending_burst: tuple[int, Rewrite, Callable[[dict[str, Any]], bool]] | None = None
        self.offset = 0
        """How far seqs after a burst are shifted (n - 1 once it was sent)."""

    # ------------------------------------------------------------ configuration

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = time.monotonic()

    def revoke_after_events(self, n: int) -> None:
        self.revoke_after = n

    def break_json(self, pattern: str, fn: Rewrite, methods: tuple[str, ...] = ("GET",)) -> None:
        self._breaks.append((re.compile(pattern), fn, methods))

    def rewrite_headers(self, fn: Callable[[RawHeaders], RawHeaders], pattern: str = "") -> None:
        self._header_rewrites.append((re.compile(pattern), fn))

    def poison(self, fn: Rewrite) -> None:
        self._poison = fn

    def event_hook(self, fn: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.hook_fn = fn

    def burst(self, n: int, make: Rewrite, when: Callable[[dict[str, Any]], bool]) -> None:
        """Send the first envelope for which `when(envelope)` holds as `n` events at once.

        Each is `make(envelope)` with its own seq (the envelope's, then the next n - 1), in
        one write. Every later event is shifted by n - 1 (SSE id and envelope seq), and so
        is the run's `last_event_seq`; a resume's `Last-Event-ID` / `since_seq` is shifted
        back, so desk_sim and the client keep agreeing on what was sent.
        """
        self.pending_burst = (n, make, when)

    def answer(self, pattern: str, fn: Answer, *, methods: tuple[str, ...] = ("GET",)) -> None:
        self._answers.append((re.compile(pattern), fn, [0], methods))

    def sse_retry(self, ms: int | str) -> None:
        self.retry_hint = ms

    def flap(self, after_s: float) -> None:
        self.flap_after_s = after_s

    def count(self, pattern: str, since: float = 0.0) -> int:
        """Requests whose path matches `pattern` (a regex, full match) that arrived at or
        after monotonic time `since`."""
        regex = re.compile(pattern)
        return sum(1 for _, path, t in self.requests if t >= since and regex.fullmatch(path))

    def after_revocation(self) -> list[tuple[str, str, float]]:
        """Requests that arrived after the token was revoked."""
        at = self.revoked_at
        return [] if at is None else [r for r in self.requests if r[2] >= at]

    # ------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        self.requests.append((method, path, time.monotonic()))
        send = self._with_headers(path, send)
        if self.revoked_at is not None and path != "/v1/capabilities":
            body = json.dumps(PROBLEM_401).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/problem+json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="ito"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if await self._answered(method, path, send):
            return
        rewrites = [
            fn for pattern, fn, verbs in self._breaks if method in verbs and pattern.search(path)
        ]
        if self._poison is not None:
            rewrites.append(self._poison)
        wants_events = path.endswith("/events")
        if self.offset and method == "GET" and re.fullmatch(r"/v1/runs/[^/]+", path):
            rewrites.append(self._shift_run)
        if wants_events and self.offset:
            scope = self._shift_resume(scope)
        if not rewrites and not (
            wants_events
            and (
                self.hook_fn
                or self.revoke_after is not None
                or self.pending_burst is not None
                or self.retry_hint is not None
                or self.flap_after_s is not None
            )
        ):
            await self.inner(scope, receive, send)
            return
        await self.inner(scope, receive, _Rewriter(self, send, rewrites).send)

    async def _answered(self, method: str, path: str, send: Send) -> bool:
        for pattern, fn, count, methods in self._answers:
            if method not in methods or not pattern.search(path):
                continue
            index = count[0]
            count[0] += 1
            canned = fn(index)
            if canned is None:
                return False
            status, extra = canned
            body = (
                b""
                if status == 204
                else json.dumps(
                    {
                        "type": "about:blank",
                        "title": f"HTTP {status}",
                        "status": status,
                        "code": "rate_limited" if status == 429 else "backend.unavailable",
                    }
                ).encode()
            )
            headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
            if status != 204:
                headers += [
                    (b"content-type", b"application/problem+json"),
                    (b"content-length", str(len(body)).encode()),
                ]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return True
        return False

    def _with_headers(self, path: str, send: Send) -> Send:
        fns = [fn for pattern, fn in self._header_rewrites if pattern.search(path)]
        if not fns:
            return send

        async def rewritten(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                for fn in fns:
                    headers = fn(headers)
                message = {**message, "headers": headers}
            await send(message)

        return rewritten

    def _shift_run(self, run: Any) -> Any:
        if isinstance(run, dict) and isinstance(run.get("last_event_seq"), int):
            return {**run, "last_event_seq": run["last_event_seq"] + self.offset}
        return run

    def _shift_resume(self, scope: Scope) -> Scope:
        """The resume point of an events request, in desk_sim's numbering."""

        def back(value: bytes) -> bytes:
            return str(max(int(value) - self.offset, 0)).encode() if value.isdigit() else value

        headers = [
            (k, back(v) if k.lower() == b"last-event-id" else v) for k, v in scope["headers"]
        ]
        query = re.sub(
            rb"(since_seq=)(\d+)", lambda m: m.group(1) + back(m.group(2)), scope["query_string"]
        )
        return {**scope, "headers": headers, "query_string": query}


class _Rewriter:
    """Intercepts one response: buffers JSON bodies, rewrites SSE line by line."""

    def __init__(self, tamper: Tamper, send: Send, rewrites: list[Rewrite]) -> None:
        self.tamper = tamper
        self.downstream = send
        self.rewrites = rewrites
        self.start: Message | None = None
        self.kind = "other"
        self.buffer = b""
        self.done = False
        self.opened = time.monotonic()

    async def send(self, message: Message) -> None:
        if self.done:
            return  # the stream was cut: swallow whatever the inner app still sends
        if message["type"] == "http.response.start":
            headers = dict(message.get("headers", []))
            ctype = headers.get(b"content-type", b"").decode()
            self.kind = "json" if "json" in ctype else "sse" if "event-stream" in ctype else "other"
            if self.kind == "json":
                self.start = message  # sent once the body (and its length) is known
                return
            await self.downstream(message)
            return
        if message["type"] != "http.response.body":
            await self.downstream(message)
            return
        if self.kind == "json":
            self.buffer += message.get("body", b"")
            if message.get("more_body", False):
                return
            await self._send_json()
        elif self.kind == "sse":
            await self._send_sse(message)
        else:
            await self.downstream(message)

    async def _send_json(self) -> None:
        body = self.buffer
        try:
            obj = json.loads(body)
        except ValueError:
            obj = None
        if obj is not None:
            for fn in self.rewrites:
                obj = fn(obj)
            body = json.dumps(obj).encode()
        assert self.start is not None
        headers = [
            (k, v) for k, v in self.start.get("headers", []) if k.lower() != b"content-length"
        ]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.downstream({**self.start, "headers": headers})
        await self.downstream({"type": "http.response.body", "body": body})

    async def _send_sse(self, message: Message) -> None:
        self.buffer += message.get("body", b"")
        more = message.get("more_body", False)
        out: list[bytes] = []
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            line = line.rstrip(b"\r")
            if line.startswith(b"retry:") and self.tamper.retry_hint is not None:
                line = f"retry: {self.tamper.retry_hint}".encode()
            if line.startswith(b"id:") and self.tamper.offset:
                seq = line[3:].strip()
                if seq.isdigit():
                    line = b"id: " + str(int(seq) + self.tamper.offset).encode()
            if line.startswith(b"data:"):
                line = self._rewrite_data(line)
                if line is None:
                    continue
            out.append(line + b"\n")
            if line == b"" and self._flap_now():
                await self.downstream(
                    {"type": "http.response.body", "body": b"".join(out), "more_body": True}
                )
                await self.downstream({"type": "http.response.body", "body": b""})
                self.done = True
                self.tamper.flaps += 1
                return
            if line == b"" and self._cut_now():
                await self.downstream(
                    {"type": "http.response.body", "body": b"".join(out), "more_body": True}
                )
                await self.downstream({"type": "http.response.body", "body": b""})
                self.done = True
                self.tamper.revoke()
                return
        if out or not more:
            await self.downstream(
                {"type": "http.response.body", "body": b"".join(out), "more_body": more}
            )

    def _flap_now(self) -> bool:
        after = self.tamper.flap_after_s
        return after is not None and time.monotonic() - self.opened >= after

    def _cut_now(self) -> bool:
        limit = self.tamper.revoke_after
        return limit is not None and self.tamper.events_sent >= limit

    def _rewrite_data(self, line: bytes) -> bytes | None:
        try:
            envelope = json.loads(line[5:].strip())
        except ValueError:
            return line
        self.tamper.events_sent += 1
        tamper = self.tamper
        if isinstance(envelope, dict) and isinstance(envelope.get("seq"), int) and tamper.offset:
            envelope = {**envelope, "seq": envelope["seq"] + tamper.offset}
        hook = tamper.hook_fn
        if hook is not None:
            envelope = hook(envelope)
        for fn in self.rewrites:
            envelope = fn(envelope)
        burst = tamper.pending_burst
        if burst is not None and isinstance(envelope, dict) and burst[2](envelope):
            tamper.pending_burst = None
            return self._burst_of(envelope, burst[0], burst[1])
        return b"data: " + json.dumps(envelope).encode()

    def _burst_of(self, envelope: dict[str, Any], n: int, make: Rewrite) -> bytes:
        """`n` messages in place of one data line: its id: line was already written (the
        first seq), and its blank line, still to come, ends the last one."""
        first = make(envelope)
        messages = [b"data: " + json.dumps(first).encode()]
        for i in range(1, n):
            copy = {**first, "seq": first["seq"] + i}
            messages.append(
                f"id: {copy['seq']}\nevent: {copy['type']}\n".encode()
                + b"data: "
                + json.dumps(copy).encode()
            )
        self.tamper.offset += n - 1
        self.tamper.events_sent += n - 1
        return b"\n\n".join(messages)
