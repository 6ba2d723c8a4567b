"""`EventStream`: a run's typed events, exactly once and in order, across any drop.

`GET /v1/runs/{id}/events` is Server-Sent Events. This iterator:

- reconnects after a drop, a server restart or a silent stall with
  exponential backoff and full jitter, resuming with `Last-Event-ID`; the
  base delay is the server's `retry:` (or `StreamPolicy.reconnect_base_s`);
- treats "no byte for 3 × `limits.heartbeat_s`" (keepalive comments count) as
  a stall: httpx's read timeout is set to that, so a stalled socket fails;
- drops every event whose seq is <= the last one yielded, so across any
  number of reconnects the consumer sees every seq once, in order;
- yields `resync` events (the consumer re-seeds its state from the Run) and
  then continues after `max(resync.seq, run.last_event_seq)`;
- stops after a terminal event, or when the server answers 204 (the run
  ended at or before our Last-Event-ID);
- raises AuthError on 401 (no retry loop), NotFound on 404,
  CapabilityMissing on 501, ProtocolError on a redirect, a wrong content type
  or a line over `MAX_SSE_LINE_BYTES`.

A message whose `data` is not a valid event envelope is not fatal: if its seq
is known (from the envelope or the SSE `id:`) it is yielded as an
`UnknownEvent` of type `invalid:<type>` whose data holds `raw` (truncated),
`error` and `field`, so the UI shows it raw and the stream goes on; with no
seq at all it cannot be ordered, so it is skipped and counted in `.skipped`
(and reported in `.state.error`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, Callable, Generator
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self
from urllib.parse import quote

from pydantic import ValidationError

from ito_tui.contract import EventBase, EventParseError, Run, UnknownEvent, now_utc, parse_event

from ._httpx import httpx
from .backoff import full_jitter
from .errors import BackendUnavailable, ItoError, ProtocolError, RateLimited, error_from_reply
from .headers import media_type
from .http import iter_body, read_capped
from .policy import StreamPolicy
from .sse import SSEDecoder, SSELineTooLong, SSEMessage

if TYPE_CHECKING:
    from .api import ItoClient

__all__ = ["ConnectionState", "EventStream", "StreamPolicy"]

log = logging.getLogger("ito_tui.client.stream")

Status = Literal["connecting", "live", "reconnecting", "resynced", "closed"]
ENDPOINT = "GET /v1/runs/{id}/events"
RAW_KEEP = 4096
"""Characters of a malformed message's data kept in its UnknownEvent."""


@dataclass(frozen=True)
class ConnectionState:
    """What the UI shows about the stream: `live`, `reconnecting in N s`, `resynced`…

    `attempt` counts consecutive reconnects that brought no new event (0 while
    healthy); `last_seq` is the last seq yielded; `error` the last problem seen.
    """

    status: Status = "connecting"
    retry_in_s: float | None = None
    attempt: int = 0
    last_seq: int = 0
    error: str | None = None


class _Stop(Exception):
    """The server said there is nothing more (204)."""


class EventStream:
    """Async iterator of a run's typed events (see module docstring).

    Built by `ItoClient.events`. `async for` it, or `await` it first to check
    the `runs.events` capability up front; `aclose()` (or `async with`) ends it.
    """

    def __init__(
        self,
        client: ItoClient,
        run_id: str,
        *,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.on_state = on_state
        self.skipped = 0
        """Malformed messages dropped because they had no seq."""
        self._client = client
        self._policy = client.stream_policy
        self._last: int | None = since_seq
        self._state = ConnectionState(last_seq=since_seq or 0)
        self._server_retry_s: float | None = None
        self._stall_s: float | None = None
        self._token: str | None = None
        self._gen: AsyncGenerator[EventBase, None] = self._generate()

    @property
    def state(self) -> ConnectionState:
        # `last_seq` moves with every event; it lives in `_last` and is folded in
        # here, on read, so the per-event path builds no new dataclass.
        last = self._last or 0
        if self._state.last_seq != last:
            self._state = replace(self._state, last_seq=last)
        return self._state

    @property
    def last_seq(self) -> int | None:
        """The last seq yielded (or the `since_seq` given), None before any."""
        return self._last

    def __repr__(self) -> str:
        return f"EventStream({self.run_id!r}, {self._state.status}, last_seq={self._last})"

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> EventBase:
        return await self._gen.__anext__()

    def __await__(self) -> Generator[Any, None, Self]:
        return self._prepared().__await__()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the stream and release its connection."""
        await self._gen.aclose()
        self._set(status="closed", retry_in_s=None)

    async def _prepared(self) -> Self:
        await self._prepare()
        return self

    async def _prepare(self) -> None:
        if self._stall_s is not None:
            return
        await self._client.require("runs.events")
        caps = await self._client.capabilities()
        self._stall_s = self._policy.stall_timeout_s or 3.0 * max(caps.limits.heartbeat_s, 0.1)

    def _set(self, **changes: Any) -> None:
        old = self._state
        new = replace(old, **{"last_seq": self._last or 0, **changes})
        self._state = new
        # `last_seq` moves with every event; the callback is for connection changes only.
        if self.on_state is not None and replace(old, last_seq=0) != replace(new, last_seq=0):
            self.on_state(new)

    # ------------------------------------------------------------ the loop

    async def _generate(self) -> AsyncGenerator[EventBase, None]:
        if self.on_state is not None:
            self.on_state(self._state)
        try:
            await self._prepare()
            failures = 0
            while True:
                error: ItoError | None = None
                progressed = False
                decoder = SSEDecoder(self._policy.max_line_bytes)
                try:
                    async with self._open() as response:
                        error = await self._check(response)
                        if error is None:
                            self._set(status="live", attempt=0, retry_in_s=None, error=None)
                            pause_at = time.monotonic() + self._policy.slice_s
                            async for chunk in iter_body(response, ENDPOINT):
                                for message in decoder.feed(chunk):
                                    event = self._accept(message)
                                    if event is None:
                                        continue
                                    progressed = True
                                    yield event
                                    if event.terminal:
                                        return
                                    if time.monotonic() >= pause_at:
                                        await asyncio.sleep(0)
                                        pause_at = time.monotonic() + self._policy.slice_s
                            error = BackendUnavailable("event stream closed by the server")
                except _Stop:
                    return
                except SSELineTooLong as exc:
                    raise ProtocolError(
                        f"{ENDPOINT}: {exc}", field="data", endpoint=ENDPOINT
                    ) from None
                except (httpx.TransportError, httpx.DecodingError) as exc:
                    error = self._client.transport.unavailable(exc, ENDPOINT)
                    if isinstance(exc, httpx.ReadTimeout):
                        error.message = f"event stream stalled: no data for {self._stall_s:g} s"
                if decoder.retry_ms is not None:
                    self._server_retry_s = decoder.retry_ms / 1000.0
                failures = 1 if progressed else failures + 1
                limit = self._policy.max_reconnects
                if limit is not None and failures > limit:
                    raise error
                delay = self._delay(failures, error)
                log.info("event stream %s: reconnecting in %.2fs (%s)", self.run_id, delay, error)
                self._set(
                    status="reconnecting", retry_in_s=delay, attempt=failures, error=str(error)
                )
                await asyncio.sleep(delay)
        except ItoError as exc:
            self._set(status="closed", retry_in_s=None, error=str(exc))
            raise
        finally:
            self._set(status="closed", retry_in_s=None)

    def _delay(self, failures: int, error: ItoError) -> float:
        retry_after = getattr(error, "retry_after", None)
        cap = self._policy.reconnect_max_s
        if isinstance(retry_after, float):
            return min(retry_after, cap)
        base = self._policy.reconnect_base_s
        if base is None:
            base = self._server_retry_s if self._server_retry_s is not None else 1.0
        return full_jitter(failures, min(base, cap), cap)

    def _open(self) -> Any:
        transport = self._client.transport
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self._last is not None:
            headers["Last-Event-ID"] = str(self._last)
        self._token = transport.current_token()
        headers.update(transport.auth_headers(self._token))
        t = transport.timeout
        timeout = httpx.Timeout(connect=t, read=self._stall_s, write=t, pool=t)
        path = f"/v1/runs/{quote(self.run_id, safe='')}/events"
        self._set(status="connecting" if self._state.status == "connecting" else "reconnecting")
        return transport.http.stream("GET", path, headers=headers, timeout=timeout)

    async def _check(self, response: httpx.Response) -> ItoError | None:
        """None when the stream may be read; an error to retry on; raises fatal ones."""
        status = response.status_code
        if status == 204:
            raise _Stop
        headers = response.headers
        if status == 200:
            media = media_type(headers) or ""
            if media != "text/event-stream":
                raise ProtocolError(
                    f"{ENDPOINT}: expected text/event-stream, got {media[:60] or 'none'!r}",
                    status=status,
                    endpoint=ENDPOINT,
                )
            return None
        body = b"" if 300 <= status < 400 else await read_capped(response, 64 * 1024, ENDPOINT)
        error = error_from_reply(status, headers, body, endpoint=ENDPOINT, capability="runs.events")
        if isinstance(error, RateLimited) or status in (500, 502, 503, 504):
            return error
        if 200 <= status < 300:
            raise ProtocolError(
                f"{ENDPOINT}: unexpected HTTP {status} for an event stream",
                status=status,
                endpoint=ENDPOINT,
            )
        raise error

    # ------------------------------------------------------------ events

    def _accept(self, message: SSEMessage) -> EventBase | None:
        """The event to yield for `message`, or None (duplicate, stale, unusable)."""
        event: EventBase | None
        try:
            event = parse_event(message.data)
        except EventParseError as exc:
            event = self._malformed(message, str(exc), exc.field)
        else:
            if event.run_id != self.run_id:
                event = self._malformed(message, "event belongs to another run", "run_id")
        if event is None:
            return None
        seq = event.seq
        if event.type == "resync":
            snapshot = getattr(event, "data", None)
            if isinstance(snapshot, Run):
                seq = max(seq, snapshot.last_event_seq)
        if self._last is not None and seq <= self._last:
            return None
        self._last = seq
        status: Status = "resynced" if event.type == "resync" else "live"
        current = self._state
        # The common case (already live, nothing to reset) changes nothing but
        # `last_seq`, which `state` folds in on read: no per-event allocation.
        if current.status != status or current.attempt or current.retry_in_s is not None:
            self._set(status=status, attempt=0, retry_in_s=None)
        return event

    def _malformed(self, message: SSEMessage, error: str, field: str | None) -> EventBase | None:
        envelope: Any = None
        try:
            envelope = json.loads(message.data)
        except (ValueError, RecursionError):
            envelope = None
        if not isinstance(envelope, dict):
            envelope = {}
        seq = envelope.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            seq = int(message.id) if message.id and message.id.isdigit() else None
        if seq is None:
            self.skipped += 1
            log.warning("event stream %s: skipped a message without seq: %s", self.run_id, error)
            self._set(error=f"skipped a malformed event: {error}")
            return None
        raw_type = envelope.get("type")
        type_ = raw_type if isinstance(raw_type, str) else message.event
        data = {"raw": message.data[:RAW_KEEP], "error": error, "field": field}
        fields: dict[str, Any] = {
            "seq": seq,
            "run_id": self.run_id,
            "type": f"invalid:{type_[:200]}",
            "data": data,
        }
        try:
            return UnknownEvent.model_validate({**fields, "ts": envelope.get("ts")})
        except ValidationError:
            return UnknownEvent.model_validate({**fields, "ts": now_utc()})
