"""`Follower`: what a resumable Server-Sent Events stream of a run stands on.

Shared by `EventStream` (`GET /v1/runs/{id}/events`) and `LogStream`
(`GET /v1/runs/{id}/logs`): the iterator protocol (awaitable to check the
capability first, `async for`, `aclose`, `async with`), the `ConnectionState`
reported through `on_state`, the reconnect delay (never under
`StreamPolicy.reconnect_floor_s` whatever `retry:` or `Retry-After` says, never
over `reconnect_max_s`), the request (`Last-Event-ID`, the stall timeout as the
read timeout, the token per attempt), the answer's status check, and the read
loop that hands the consumer back to the event loop every `slice_s`. What each
stream does with its messages, and when it is over, is its own (`_generate`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar
from urllib.parse import quote

from ito_tui.contract import Capabilities

from ._httpx import httpx
from .backoff import bounded, floored_jitter
from .connection import ConnectionState, Flaps
from .errors import ItoError, ProtocolError, RateLimited, error_from_reply
from .headers import media_type
from .http import iter_body, read_capped
from .sse import SSEDecoder, SSEMessage

if TYPE_CHECKING:
    from .api import ItoClient

__all__ = ["Follower", "Skip", "Stop"]

T = TypeVar("T")


class Stop(Exception):
    """The server said there is nothing more (204)."""


class Skip(Exception):
    """This attempt is over before it began (the backend is unreachable)."""

    def __init__(self, error: ItoError) -> None:
        super().__init__()
        self.error = error


class Follower(Generic[T]):
    """An async iterator of one run's SSE stream (see module docstring).

    Subclasses set `ENDPOINT`, `CAPABILITY`, `NOUN`, `SUFFIX` and `_log`, and
    write `_generate`.
    """

    ENDPOINT: ClassVar[str]
    CAPABILITY: ClassVar[str]
    NOUN: ClassVar[str]
    """What the stream is called in messages ("event stream")."""
    SUFFIX: ClassVar[str]
    """The path after `/v1/runs/{id}/` ("events")."""
    _log: ClassVar[logging.Logger]

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
        self._client = client
        self._policy = client.stream_policy
        self._last: int | None = since_seq
        self._state = ConnectionState(last_seq=since_seq or 0)
        self._server_retry_s: float | None = None
        self._stall_s: float | None = None
        self._token: str | None = None
        self._flaps = Flaps()
        self._gen: AsyncGenerator[T, None] = self._generate()

    def _generate(self) -> AsyncGenerator[T, None]:
        raise NotImplementedError

    @property
    def state(self) -> ConnectionState:
        # `last_seq` moves with every item; it lives in `_last` and is folded in
        # here, on read, so the per-item path builds no new dataclass.
        last = self._last or 0
        if self._state.last_seq != last:
            self._state = replace(self._state, last_seq=last)
        return self._state

    @property
    def last_seq(self) -> int | None:
        """The last seq yielded (or the `since_seq` given), None before any."""
        return self._last

    def __repr__(self) -> str:
        name, status = type(self).__name__, self._state.status
        return f"{name}({self.run_id!r}, {status}, last_seq={self._last})"

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
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
        await self._client.require(self.CAPABILITY)
        caps = await self._client.capabilities()
        self._prepared_with(caps)
        self._stall_s = self._policy.stall_s(caps.limits.heartbeat_s)

    def _prepared_with(self, caps: Capabilities) -> None:
        """What a subclass takes from the capabilities before its first request."""

    def _set(self, **changes: Any) -> None:
        old = self._state
        new = replace(old, **{"last_seq": self._last or 0, **changes})
        self._state = new
        # `last_seq` moves with every item; the callback is for connection changes only.
        if self.on_state is not None and replace(old, last_seq=0) != replace(new, last_seq=0):
            self.on_state(new)

    def _reconnecting(self, delay: float, failures: int, reason: str) -> None:
        lines = self._flaps.reconnect(reason, delay)
        for line in lines:
            self._log.info("%s %s: %s", self.NOUN, self.run_id, line)
        if not lines:
            self._log.debug(
                "%s %s: reconnecting in %.2fs (%s)", self.NOUN, self.run_id, delay, reason
            )
        self._set(
            status="reconnecting",
            retry_in_s=delay,
            attempt=failures,
            error=reason,
            reconnects=self._state.reconnects + 1,
        )

    def _closing(self) -> None:
        for line in self._flaps.close():
            self._log.info("%s %s: %s", self.NOUN, self.run_id, line)
        self._set(status="closed", retry_in_s=None)

    def _delay(self, failures: int, error: ItoError) -> float:
        """Seconds before the next reconnect: never under the floor, never over the cap."""
        base = self._policy.reconnect_base_s
        if base is None:
            base = self._server_retry_s if self._server_retry_s is not None else 1.0
        retry_after = getattr(error, "retry_after", None)
        floor, cap = self._policy.reconnect_floor_s, self._policy.reconnect_max_s
        delay = floored_jitter(failures, base, floor, cap)
        return bounded(max(delay, retry_after), floor, cap) if retry_after else delay

    async def _pause(self, failures: int, error: ItoError, *, soonest: bool = False) -> None:
        """Wait before reconnect number `failures` (raises `error` past `max_reconnects`);
        `soonest`: just the floor (one last request for a tail, not a retry)."""
        limit = self._policy.max_reconnects
        if limit is not None and failures > limit:
            raise error
        delay = self._policy.reconnect_floor_s if soonest else self._delay(failures, error)
        self._reconnecting(delay, failures, str(error))
        await asyncio.sleep(delay)

    def _dropped(self, exc: httpx.TransportError | httpx.DecodingError) -> ItoError:
        """What a dropped, refused or stalled connection is called."""
        error = self._client.transport.unavailable(exc, self.ENDPOINT)
        if isinstance(exc, httpx.ReadTimeout):
            error.message = f"{self.NOUN} stalled: no data for {self._stall_s:g} s"
        return error

    def _note_retry(self, decoder: SSEDecoder) -> None:
        """Keep the server's `retry:` (bounded when used, in `_delay`)."""
        if decoder.retry_ms is not None:
            self._server_retry_s = decoder.retry_ms / 1000.0

    def _open(self, params: Mapping[str, Any] | None = None) -> Any:
        transport = self._client.transport
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self._last is not None:
            headers["Last-Event-ID"] = str(self._last)
        self._token = transport.current_token()
        headers.update(transport.auth_headers(self._token))
        t = transport.timeout
        timeout = httpx.Timeout(connect=t, read=self._stall_s, write=t, pool=t)
        path = f"/v1/runs/{quote(self.run_id, safe='')}/{self.SUFFIX}"
        self._set(status="connecting" if self._state.status == "connecting" else "reconnecting")
        return transport.http.stream(
            "GET", path, params=dict(params or {}), headers=headers, timeout=timeout
        )

    async def _messages(
        self, response: httpx.Response, decoder: SSEDecoder
    ) -> AsyncIterator[SSEMessage]:
        """The answer's messages as they arrive, yielding to the event loop every `slice_s`
        (a backlog comes in 64 KiB reads of ~100 messages; a UI sharing the loop would
        otherwise wait that long per read)."""
        slice_s = self._policy.slice_s
        pause_at = time.monotonic() + slice_s
        async for chunk in iter_body(response, self.ENDPOINT):
            for message in decoder.feed(chunk):
                yield message
                if time.monotonic() >= pause_at:
                    await asyncio.sleep(0)
                    pause_at = time.monotonic() + slice_s

    async def _check(self, response: httpx.Response) -> ItoError | None:
        """None when the stream may be read; an error to retry on; raises fatal ones
        (raises `Stop` on a 204)."""
        status = response.status_code
        endpoint = self.ENDPOINT
        if status == 204:
            raise Stop
        headers = response.headers
        if status == 200:
            media = media_type(headers) or ""
            if media != "text/event-stream":
                raise ProtocolError(
                    f"{endpoint}: expected text/event-stream, got {media[:60] or 'none'!r}",
                    status=status,
                    endpoint=endpoint,
                )
            return None
        body = b"" if 300 <= status < 400 else await read_capped(response, 64 * 1024, endpoint)
        error = error_from_reply(
            status, headers, body, endpoint=endpoint, capability=self.CAPABILITY
        )
        if isinstance(error, RateLimited) or status in (500, 502, 503, 504):
            return error
        if 200 <= status < 300:
            raise ProtocolError(
                f"{endpoint}: unexpected HTTP {status} for the {self.NOUN}",
                status=status,
                endpoint=endpoint,
            )
        raise error
