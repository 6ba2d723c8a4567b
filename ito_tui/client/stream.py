"""`EventStream`: a run's typed events, exactly once and in order, across any drop.

`GET /v1/runs/{id}/events` is Server-Sent Events. This iterator (on `follow.Follower`,
the machinery it shares with the job log's `LogStream`):

- reconnects after a drop, a server restart or a silent stall, resuming with
  `Last-Event-ID`. Every reconnect waits between `StreamPolicy.reconnect_floor_s`
  (1 s) and `reconnect_max_s` (30 s) whatever the server sent: the wait is
  uniform in [floor, base·2^(n-1)] for the n-th fruitless attempt (base: the
  server's `retry:`, 1 s without one), and at least a `Retry-After`; so a
  `retry: 0`, a `Retry-After: 0` or a date in the past cannot make a storm;
- treats "no byte for 3 × `limits.heartbeat_s`" (keepalive comments count),
  bounded to [`stall_min_s`, `stall_max_s`], as a stall: httpx's read timeout
  is set to that, so a stalled socket fails;
- drops every event whose seq is <= the last one yielded, so across any
  number of reconnects the consumer sees every seq once, in order;
- yields `resync` events (the consumer re-seeds its state from the Run) and
  then continues after `max(resync.seq, run.last_event_seq)`; a resync
  carrying another run's snapshot is yielded as `invalid:resync` (never
  applied) and named in `.state.error`;
- stops after a terminal event;
- raises AuthError on 401 (no retry loop), NotFound on 404,
  CapabilityMissing on 501, ProtocolError on a redirect, a wrong content type
  or a line over `MAX_SSE_LINE_BYTES`.

A stream that ends without its terminal event (a 204, a close or a drop of a
live stream) makes it re-read the run's snapshot (`ItoClient.run`) before it
goes on, and act on `resume.judge`'s verdict: still running → reconnect;
ended after events not seen yet → reconnect once more for them; ended →
yield the snapshot as a `resync` and stop (`watch` exits with the outcome);
`last_event_seq` below the last seq yielded → the backend's history went
backwards (restored from a backup?): say so (`.state.error`, a log warning),
yield the snapshot as a `resync` numbered by the backend, and follow its
numbering from then on. A `resync` at or below a seq already yielded comes
only from this and tells the consumer to re-base (`RunTracker.rebase`). A
snapshot not read for a transient reason is re-read before the next attempt.
Reconnects are logged through `Flaps`: never a line per reconnect.

A message that is not a valid event envelope is not fatal: with a known seq
it is yielded as an `UnknownEvent` of type `invalid:<type>` (`invalid_event`),
shown raw while the stream goes on; with none it is skipped and counted in
`.skipped` (and reported in `.state.error`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, ClassVar

from ito_tui.contract import Capabilities, EventBase, EventParseError, Run, parse_event

from ._httpx import httpx
from .connection import ConnectionState, Status
from .errors import BackendUnavailable, ItoError, ProtocolError
from .follow import Follower, Skip, Stop
from .invalid import invalid_event
from .policy import StreamPolicy
from .resume import Resumer, Verdict
from .sse import SSEDecoder, SSELineTooLong, SSEMessage

if TYPE_CHECKING:
    from .api import ItoClient

__all__ = ["ConnectionState", "EventStream", "StreamPolicy"]

log = logging.getLogger("ito_tui.client.stream")

ENDPOINT = "GET /v1/runs/{id}/events"


class EventStream(Follower[EventBase]):
    """Async iterator of a run's typed events (see module docstring).

    Built by `ItoClient.events`. `async for` it, or `await` it first to check
    the `runs.events` capability up front; `aclose()` (or `async with`) ends it.
    """

    ENDPOINT: ClassVar[str] = ENDPOINT
    CAPABILITY: ClassVar[str] = "runs.events"
    NOUN: ClassVar[str] = "event stream"
    SUFFIX: ClassVar[str] = "events"
    _log: ClassVar[logging.Logger] = log

    def __init__(
        self,
        client: ItoClient,
        run_id: str,
        *,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> None:
        self.skipped = 0
        """Malformed messages dropped because they had no seq."""
        self._yielded = False
        # `ItoClient.run` checks that the answer is the run asked about.
        self._resume = Resumer(lambda: client.run(run_id))
        super().__init__(client, run_id, since_seq=since_seq, on_state=on_state)

    def _prepared_with(self, caps: Capabilities) -> None:
        self._resume.possible = caps.has("runs.read")

    # ------------------------------------------------------------ the loop

    async def _generate(self) -> AsyncGenerator[EventBase, None]:
        if self.on_state is not None:
            self.on_state(self._state)
        try:
            await self._prepare()
            failures = 0
            while True:
                error: ItoError | None = None
                progressed = live = stopped = False
                decoder = SSEDecoder(self._policy.max_line_bytes)
                # A snapshot that could not be re-read after the last end: before anything
                # else, or a restored backend would be followed from a position it never had.
                verdict, problem = await self._reread() if self._resume.due else (None, None)
                if verdict is not None and verdict.event is not None:
                    yield verdict.event
                if verdict is not None and verdict.finished:
                    return
                try:
                    if problem is not None and problem.status is None:
                        raise Skip(problem)  # unreachable: the stream would fail the same way
                    async with self._open() as response:
                        error = await self._check(response)
                        if error is None:
                            live = True
                            self._set(status="live", attempt=0, retry_in_s=None, error=None)
                            async for message in self._messages(response, decoder):
                                event = self._accept(message)
                                if event is None:
                                    continue
                                progressed = True
                                yield event
                                if event.terminal:
                                    return
                            error = BackendUnavailable("event stream closed by the server")
                except Stop:
                    stopped = True
                    error = BackendUnavailable("the server ended the event stream (HTTP 204)")
                except Skip as skip:
                    error = skip.error
                except SSELineTooLong as exc:
                    raise ProtocolError(
                        f"{ENDPOINT}: {exc}", field="data", endpoint=ENDPOINT
                    ) from None
                except (httpx.TransportError, httpx.DecodingError) as exc:
                    error = self._dropped(exc)
                self._note_retry(decoder)
                failures = 1 if progressed else failures + 1
                if live or stopped:
                    # Ended without the terminal event: what does the run's snapshot say?
                    self._resume.due = "204" if stopped else "closed"
                    verdict, problem = await self._reread()
                    if verdict is not None and verdict.event is not None:
                        yield verdict.event
                    if verdict is not None and verdict.finished:
                        return
                    if verdict is not None and stopped:
                        error = BackendUnavailable(verdict.message)  # says more than "204"
                    elif problem is not None and stopped:
                        error = problem
                assert error is not None
                await self._pause(failures, error)
        except ItoError as exc:
            self._set(status="closed", retry_in_s=None, error=str(exc))
            raise
        finally:
            self._closing()

    async def _reread(self) -> tuple[Verdict | None, ItoError | None]:
        """Re-read the snapshot (`Resumer.verdict`) and act on what it says."""
        verdict, problem = await self._resume.verdict(self._last or 0, fresh=not self._yielded)
        if problem is not None:
            log.debug("event stream %s: snapshot not re-read (%s)", self.run_id, problem)
        elif verdict is not None and verdict.kind in ("rewound", "ended"):
            level = logging.WARNING if verdict.kind == "rewound" else logging.INFO
            log.log(level, "event stream %s: %s", self.run_id, verdict.message)
        if verdict is not None and verdict.event is not None:
            self._last = verdict.event.seq
            self._yielded = True
            error = verdict.message if verdict.kind == "rewound" else self._state.error
            self._set(status="resynced", note=verdict.message, error=error)
        return verdict, problem

    # ------------------------------------------------------------ events

    def _accept(self, message: SSEMessage) -> EventBase | None:
        """The event to yield for `message`, or None (duplicate, stale, unusable)."""
        event: EventBase | None
        try:
            event = parse_event(message.data)
        except EventParseError as exc:
            event = self._malformed(message, str(exc), exc.field)
        else:
            snapshot = getattr(event, "data", None) if event.type == "resync" else None
            if event.run_id != self.run_id:
                event = self._malformed(message, "event belongs to another run", "run_id")
            elif isinstance(snapshot, Run) and snapshot.run_id != self.run_id:
                error = (
                    f"{ENDPOINT}: the resync of run {self.run_id!r} carries the snapshot of "
                    f"run {snapshot.run_id[:80]!r}"
                )
                log.warning("event stream %s: %s", self.run_id, error)
                self._set(error=error)
                event = self._malformed(message, error, "data.run_id")
        if event is None:
            return None
        seq = event.seq
        snapshot = getattr(event, "data", None) if event.type == "resync" else None
        if isinstance(snapshot, Run):
            seq = max(seq, snapshot.last_event_seq)
        if self._last is not None and seq <= self._last:
            return None
        self._last = seq
        self._yielded = True
        status: Status = "resynced" if event.type == "resync" else "live"
        current = self._state
        # The common case (already live, nothing to reset) changes nothing but
        # `last_seq`, which `state` folds in on read: no per-event allocation.
        if current.status != status or current.attempt or current.retry_in_s is not None:
            self._set(status=status, attempt=0, retry_in_s=None)
        return event

    def _malformed(self, message: SSEMessage, error: str, field: str | None) -> EventBase | None:
        event = invalid_event(message, self.run_id, error, field)
        if event is None:
            self.skipped += 1
            log.warning("event stream %s: skipped a message without seq: %s", self.run_id, error)
            self._set(error=f"skipped a malformed event: {error}")
        return event
