"""Following one run's job log for the Logs tab: the stream into a bounded buffer, pages back.

`LogFollower` is the body of the Logs tab's workers. It reads the network (through the
client's `logs` stream and `log_page`) and writes the tab's `state.LogBuffer`; it draws
nothing, and tells the pane what changed through `LogSink`. What it decides:

- a flood never starves the keys: every `YIELD_EVERY` lines it gives the event loop a
  turn (the stream may hand over a whole read buffer of lines without awaiting);
- a paused view never loses the lines it shows: when the buffer is full and the view
  is near its oldest line, the sink says there is no room and the follower stops (the
  stream closes; End starts again from the newest lines);
- resuming after the tab was hidden costs what was missed, not a replay of everything:
  one line's page tells how far the log went on (`resumable`), and a gap larger than
  half the buffer starts over with `tail` instead;
- a time (a fault's) is found by bisection over one-line pages (`seq_at`), so
  jumping to an hour-old fault costs ~17 small requests, not the lines in between.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from ito_tui.contract import LogLine, LogTruncated
from ito_tui.state.logbuffer import LogBuffer

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState
    from ito_tui.client.protocol import ItoApi
    from ito_tui.state.logbuffer import LogFilter

__all__ = [
    "CONTEXT_BEFORE",
    "MAX_BYTES",
    "MAX_LINES",
    "PAGE",
    "TAIL",
    "YIELD_EVERY",
    "LogFollower",
    "LogSink",
    "new_buffer",
]

MAX_LINES = 20_000
"""Lines the tab holds (older ones are fetched again on scrollback)."""
MAX_BYTES = 3 * 2**20
"""Bytes the tab holds, whatever the lines' length (`LogBuffer.nbytes`: ~7,000 of the
flood's lines of ~150 characters, ~12,000 of a trainer's). Bench 18.13 allows 10 MB of
growth for the whole app in a flood; at 4 MiB it grew 9.9 MB in 30 s, at 3 MiB 8.6."""
TAIL = 500
"""Lines replayed when the tab opens or starts again from the newest."""
PAGE = 500
"""Lines one scrollback page fetches."""
CONTEXT_BEFORE = 40
"""Lines kept above a line jumped to (a fault's time, a match far back)."""
YIELD_EVERY = 100
"""Lines read between two turns given to the event loop (keys, repaints)."""
MAX_BISECT = 64
"""Requests a search for a time may make (2**64 lines would need as many)."""


def new_buffer() -> LogBuffer:
    """An empty buffer of the tab's size."""
    return LogBuffer(max_lines=MAX_LINES, max_bytes=MAX_BYTES)


class LogSink(Protocol):
    """What the follower tells the Logs tab."""

    def added(self, evicted: int) -> None:
        """A line went into the buffer; `evicted` old ones left its top."""

    def room(self) -> bool:
        """Whether the buffer may take another line (False: the paused view would lose
        the lines it shows)."""

    def connection_changed(self, state: ConnectionState) -> None:
        """The stream's connection changed (live, reconnecting …)."""


class LogFollower:
    """The Logs tab's network side: one run, one filter, one buffer at a time."""

    def __init__(
        self, client: ItoApi, run_id: str, buffer: LogBuffer, sink: LogSink, filt: LogFilter
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.buffer = buffer
        self.sink = sink
        self.filter = filt
        self.at_start = False
        """Nothing older than the buffer's first line matches (a page said so)."""

    def _filters(self) -> dict[str, Any]:
        f = self.filter
        return {
            "ranks": tuple(sorted(f.ranks)),
            "level": f.level,
            "sources": tuple(sorted(f.sources)),
            "q": f.q,
        }

    async def follow(self, *, since_seq: int | None = None, tail: int | None = TAIL) -> bool:
        """Read the stream into the buffer until the run's log ends (True) or the sink has
        no room (False). Raises what the stream raises (`CapabilityMissing` first)."""
        stream = self.client.logs(
            self.run_id,
            tail=None if since_seq is not None else tail,
            since_seq=since_seq,
            on_state=self.sink.connection_changed,
            **self._filters(),
        )
        buffer, sink = self.buffer, self.sink
        try:
            await stream  # the capability, checked before the first request
            read = 0
            async for item in stream:
                if isinstance(item, LogTruncated):
                    buffer.truncated(item.dropped)
                    sink.added(0)
                elif not sink.room():
                    return False
                else:
                    dropped = buffer.dropped_oldest
                    if buffer.add(item):
                        sink.added(buffer.dropped_oldest - dropped)
                read += 1
                if read % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
        finally:
            await stream.aclose()
        return True

    async def newest_seq(self) -> int | None:
        """The seq of the newest line matching the filter (None: no line yet)."""
        page = await self.client.log_page(self.run_id, limit=1, **self._filters())
        return page.items[-1].seq if page.items else None

    async def resumable(self, gap: int = MAX_LINES // 2) -> bool:
        """Whether resuming after the buffer's last line costs at most `gap` lines (else
        start again from the newest with `tail`)."""
        last = self.buffer.last_seq
        if last is None:
            return False
        newest = await self.newest_seq()
        return newest is None or newest - last <= gap

    async def older(self, limit: int = PAGE) -> int:
        """Fetch the page before the buffer's first line into it; the lines added."""
        first = self.buffer.first_seq
        if self.at_start or first is None:
            return 0
        page = await self.client.log_page(
            self.run_id, before_seq=first, limit=limit, **self._filters()
        )
        if page.next_before_seq is None or not page.items:
            self.at_start = True
        return self.buffer.add_older(page.items)

    async def before(self, seq: int | None, **extra: Any) -> LogLine | None:
        """The newest line before `seq` (None: of all) matching the filter and `extra`
        (`q=`, `level=` override the filter's)."""
        query = {**self._filters(), **extra}
        page = await self.client.log_page(self.run_id, before_seq=seq, limit=1, **query)
        return page.items[-1] if page.items else None

    async def seq_at(self, when: datetime, *, below: int | None = None) -> int | None:
        """The seq of the first line at or after `when` (None: every line is older),
        looking below seq `below` (the buffer's first line) when given."""
        newest = await self.before(below)
        if newest is None or newest.at < when:
            return below
        lo, hi = 0, newest.seq  # lines <= lo are older than `when`; hi is at/after it
        for _ in range(MAX_BISECT):
            if hi - lo <= 1:
                break
            mid = (lo + hi) // 2
            line = await self.before(mid + 1)
            if line is None or line.seq <= lo:
                lo = mid  # no line in (lo, mid]
            elif line.at < when:
                lo = mid  # the last line up to mid is older: so are the ones before it
            else:
                hi = line.seq
        return hi

    async def around(self, seq: int) -> int | None:
        """Fill the (fresh, empty) buffer with the lines up to `seq`, a few before it for
        context; the index of the last of them (None: no line matches the filter)."""
        page = await self.client.log_page(
            self.run_id, before_seq=seq + 1, limit=CONTEXT_BEFORE + 1, **self._filters()
        )
        if page.next_before_seq is None:
            self.at_start = True
        added = self.buffer.add_older(page.items)
        return added - 1 if added else None
