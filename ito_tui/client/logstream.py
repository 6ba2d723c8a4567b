"""`LogStream`: a run's job log (`GET /v1/runs/{id}/logs`), every line once, in order.

Built by `ItoClient.logs`; it stands on `follow.Follower` as `EventStream` does
(reconnects never faster than `StreamPolicy.reconnect_floor_s` whatever `retry:`
says, `Last-Event-ID` resume, the stall timeout, `ConnectionState`), and:

- asks with the same filters (`rank=`, `level=`, `source=`, `q=`) on every
  connection, `tail=` only until a connection was served (a reconnect resumes
  after the last seq yielded, or, when no line matched yet, asks `tail=0`: live
  lines only; one dropped before its first line asks for the tail again);
- yields `LogLine`s, and a `LogTruncated` when the server says lines older than
  its retention are gone (`event: log.truncated`);
- drops a line whose seq is not above the last one yielded (a duplicate, a seq
  going backwards: counted in `.stale`; the first such answer to a resume asks for
  the log's newest line, and a log that now ends before the resume point is named
  in `.problem`: the backend's history went backwards), and a line that does not match the
  filters asked for or is not a valid LogLine (counted in `.skipped`); the last
  such is named in `.problem` (and `.state.error` until the connection's next
  change), the first of each kind logged, and the stream goes on: a wrong line
  is never shown, and one bad line does not cost the operator the log;
- bounds memory whatever the server sends: a message over the cap
  (`message_cap`: 8 × `limits.log_line_bytes`, at least 64 KiB) is cut as it
  arrives, the rest discarded unread; its line is recovered from what was kept
  (metadata and the start of its text, `cut=True`, counted in `.oversized`), or
  skipped when nothing usable was kept. Invalid UTF-8 reads as U+FFFD; a raw
  control character (NUL) inside the JSON is accepted as the character it is;
- ends (StopAsyncIteration) when the server answers 204 (a resume past the end
  of an ended run), or when the stream closes and the run's snapshot says the
  run is over and either no line matched or a reconnect brought nothing more
  (that reconnect, for a tail a cut stream had not sent, waits just the floor);
- accepts a message without `event:` as a line, ignores unknown types, and
  yields to the event loop every `slice_s` in a burst;
- raises AuthError on 401, NotFound on 404, CapabilityMissing on 501 (or when
  `runs.logs` is not offered, before any request), ProtocolError on a redirect or
  a wrong content type.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ito_tui.contract import Capabilities, LogLine, LogTruncated

from ._httpx import httpx
from .connection import ConnectionState
from .errors import BackendUnavailable, ItoError, NotFound
from .follow import Follower, Stop
from .loglines import TRUNCATED, LogQuery, parse_line
from .sse import SSEDecoder, SSEMessage

if TYPE_CHECKING:
    from .api import ItoClient

__all__ = ["LogItem", "LogStream"]

log = logging.getLogger("ito_tui.client.logstream")

ENDPOINT = "GET /v1/runs/{id}/logs"

LogItem = LogLine | LogTruncated

MIN_MESSAGE_CAP = 64 * 1024
"""Smallest per-message cap: a 4 KiB line, JSON-escaped (`\\u0000` is 6 bytes), fits."""


class LogStream(Follower[LogItem]):
    """Async iterator of a run's log lines (see module docstring)."""

    ENDPOINT: ClassVar[str] = ENDPOINT
    CAPABILITY: ClassVar[str] = "runs.logs"
    NOUN: ClassVar[str] = "log stream"
    SUFFIX: ClassVar[str] = "logs"
    _log: ClassVar[logging.Logger] = log

    def __init__(
        self,
        client: ItoClient,
        run_id: str,
        query: LogQuery,
        *,
        tail: int | None = 200,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> None:
        self.query = query
        self.tail = tail
        self.skipped = 0
        """Lines dropped as invalid or not matching the filters asked for."""
        self.stale = 0
        """Lines dropped because their seq was not above the last one yielded."""
        self.oversized = 0
        """Lines over `message_cap`, yielded cut (or skipped, counted in `skipped` too)."""
        self.problem: str | None = None
        """The last line dropped and why (kept: `state.error` moves on with the connection)."""
        self.message_cap = MIN_MESSAGE_CAP
        self._can_read_run = True
        self._warned: set[str] = set()
        self._history: str | None = None
        super().__init__(client, run_id, since_seq=since_seq, on_state=on_state)

    def _prepared_with(self, caps: Capabilities) -> None:
        self._can_read_run = caps.has("runs.read")
        cap = 8 * caps.limits.log_line_bytes
        self.message_cap = min(max(cap, MIN_MESSAGE_CAP), self._policy.max_line_bytes)

    def _params(self, first: bool) -> dict[str, Any]:
        params = self.query.params()
        if self._last is None:
            # Resuming exactly needs no tail; before any line, a reconnect wants live lines only.
            if first and self.tail is not None:
                params["tail"] = self.tail
            elif not first:
                params["tail"] = 0
        return params

    # ------------------------------------------------------------ the loop

    async def _generate(self) -> AsyncGenerator[LogItem, None]:
        if self.on_state is not None:
            self.on_state(self._state)
        try:
            await self._prepare()
            failures = 0
            first = True
            end_at: int | None = None  # the last seq when the run was seen over at a close
            while True:
                error: ItoError | None = None
                progressed = closed = False
                decoder = SSEDecoder(self.message_cap, cut=True)
                resumed_at, stale = self._last, self.stale  # what a resume must answer after
                try:
                    async with self._open(self._params(first)) as response:
                        error = await self._check(response)
                        if error is None:
                            self._set(status="live", attempt=0, retry_in_s=None)
                            async for message in self._messages(response, decoder):
                                item = self._accept(message)
                                if item is None:
                                    if resumed_at is not None and stale < self.stale:
                                        # A resume answered with an old line: once per connection.
                                        await self._went_back(resumed_at)
                                        resumed_at = None
                                    continue
                                progressed = True
                                yield item
                            closed = True
                            error = BackendUnavailable("log stream closed by the server")
                except Stop:
                    return  # 204: the run has ended and every line was sent
                except (httpx.TransportError, httpx.DecodingError) as exc:
                    error = self._dropped(exc)
                self._note_retry(decoder)
                failures = 1 if progressed else failures + 1
                if closed:
                    first = False  # the tail was served (a drop before any line: ask again)
                    # The server closes after the run's end; the reconnect after that is
                    # answered 204, or brings a tail a cut stream had not sent, or nothing.
                    ended = await self._run_ended()
                    if ended and (self._last is None or end_at == self._last):
                        return
                    end_at = self._last if ended else None
                assert error is not None
                # After the run's end the reconnect only asks for a tail (204): the floor.
                await self._pause(failures, error, soonest=closed and end_at is not None)
        except ItoError as exc:
            self._set(status="closed", retry_in_s=None, error=str(exc))
            raise
        finally:
            self._closing()

    async def _went_back(self, resumed_at: int) -> None:
        """Say so when the backend's log now ends before the seq resumed at (restored from a
        backup): its lines up to there are dropped as seen, and the operator must know why."""
        try:
            newest = await self._client.log_page(self.run_id, limit=1)
        except ItoError as exc:
            log.debug("log stream %s: newest line not read (%s)", self.run_id, exc)
            return
        head = newest.items[-1].seq if newest.items else 0
        if head < resumed_at:
            self._history = self.problem = (
                f"the backend's log went backwards from seq {resumed_at} to {head} (restored "
                f"from a backup?); its lines up to seq {resumed_at} are not shown"
            )
            log.warning("log stream %s: %s", self.run_id, self.problem)
            self._set(error=self.problem)

    async def _run_ended(self) -> bool:
        """Whether the run's snapshot says it is over (False when it cannot be read)."""
        if not self._can_read_run:
            return False
        try:
            run = await self._client.run(self.run_id)
        except NotFound:
            raise
        except ItoError as exc:
            log.debug("log stream %s: run not re-read (%s)", self.run_id, exc)
            return False
        return run.terminal

    # ------------------------------------------------------------ lines

    def _accept(self, message: SSEMessage) -> LogItem | None:
        """The item to yield for `message`, or None (unknown type, stale, unusable)."""
        if message.event == "log.truncated":
            try:
                gap = TRUNCATED().validate_json(message.data)
            except ValueError as exc:
                self._drop("skipped", f"a log.truncated that is not valid: {_first_line(exc)}")
                return None
            if gap.dropped < 0:
                self._drop("skipped", f"a log.truncated of {gap.dropped} lines")
                return None
            # Its `id:` is where the kept lines begin: a reconnect resumes there, not before.
            at = _seq_of(message.id)
            if at is not None and (self._last is None or at > self._last):
                self._last = at
            return gap
        if message.event not in ("log", "message"):
            # Clients ignore event types they do not know (API.md); a message without
            # `event:` is EventSource's "message" and read as a line, as the events' are.
            return None
        line, problem = parse_line(message)
        if line is None:
            self._drop("skipped", f"a message that is not a valid log line: {problem}")
            return None
        if message.cut:
            self.oversized += 1
            self._warn(
                "oversized", f"cut a log line over {self.message_cap} bytes (seq {line.seq})"
            )
        if self._last is not None and line.seq <= self._last:
            self._drop(
                "stale", f"log seq {line.seq} is not after {self._last} (duplicate or backwards)"
            )
            return None
        mismatch = self.query.mismatch(line, text_cut=line.cut)
        if mismatch is not None:
            self._drop("skipped", f"log line {line.seq} does not match the filter: {mismatch}")
            return None
        self._last = line.seq
        return line

    def _drop(self, counter: str, why: str) -> None:
        setattr(self, counter, getattr(self, counter) + 1)
        # A history gone backwards explains every stale line after it: it stays the problem.
        self.problem = self._history or f"dropped {why}"
        self._set(error=self.problem)
        self._warn(counter, why)

    def _warn(self, kind: str, why: str) -> None:
        """Log the first problem of each kind (a flood of bad lines is one log line)."""
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("log stream %s: %s", self.run_id, why)


def _seq_of(id_: str | None) -> int | None:
    # ASCII digits only: "²".isdigit() is True, and int("²") raises.
    if id_ and id_.isascii() and id_.isdigit() and len(id_) <= 18:
        return int(id_)
    return None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
