"""`LogBuffer`: the lines of a run's job log a view holds, with a line cap AND a byte cap.

The Logs tab and `ito-tui logs` follow `client.logs(...)` into one of these. It is a
contiguous window of the (filtered) log, oldest first: the live stream appends at
the end, a `/logs/page` answer (scrolling back) is prepended at the start. Whatever
the run writes, the window stays within `max_lines` lines and `max_bytes` bytes:
appending evicts the oldest lines, prepending evicts the newest (and the buffer
then says it is `detached` from the live end: lines past the gap are not stored,
only counted, until the view jumps back to the end and starts again — nothing is
ever shown out of order or with a silent hole).

Every line is made inert once, on the way in (`textsafe.log_text`, at most
`LOG_DISPLAY_CAP` characters), so drawing, searching and measuring never see raw
backend text. Lines are deduplicated by seq: a replay after a reconnect adds
nothing. Pure and synchronous: no textual, no I/O.

The held lines are plain tuples (a `ShownLine` is made when one is read): a tuple of
ints, strings and datetimes is untracked by the cyclic garbage collector, so the held
lines are not walked by every full collection. (What made full collections frequent in a
12,000 lines/s flood was Textual's strips, see `ito_tui/startup.py`; a `NamedTuple` a
line added ~17,000 objects to each one's walk, bench 18.13, `gc.get_objects`.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Final, NamedTuple

from ito_tui.contract import LogLine
from ito_tui.format import integer
from ito_tui.textsafe import LOG_DISPLAY_CAP, log_text, one_line

from .logfilter import LEVEL_RANK, LogFilter, compile_search, level_rank

__all__ = [
    "LEVEL_RANK",
    "LINE_OVERHEAD",
    "LogBuffer",
    "LogFilter",
    "ShownLine",
    "compile_search",
    "level_rank",
]

_ERROR = LEVEL_RANK["error"]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LINE_OVERHEAD = 300
"""Bytes a held line costs besides its text: the record (11 fields), its two timestamps, a
rank past the small-int cache and the list slot. Measured with tracemalloc on 20,000
torchtitan-like lines (451 bytes retained a line for a 101-character text, of which
`sys.getsizeof` counts 150), so `nbytes`, and the byte cap, track real memory."""


class ShownLine(NamedTuple):
    """One held line, its text already inert (`textsafe.log_text`)."""

    seq: int
    ts: datetime
    rank: int | None
    node: str | None
    level: str
    source: str
    text: str
    cut: bool
    """The server (or this client, past `LOG_DISPLAY_CAP`) cut the line."""
    sim_ts: datetime | None = None
    replica_id: str | None = None
    marker: bool = False
    """A line this client wrote (`N older lines are gone`), not one of the run's."""

    @property
    def at(self) -> datetime:
        """When the line was written on the run's clock (`sim_ts`, else `ts`)."""
        return self.sim_ts or self.ts


_NAMES: dict[object, str] = {}
_NAMES_MAX = 4096
"""Inert forms of names (levels, sources, nodes, replicas) kept: a burst repeats a few
hundred; a backend inventing one per line cannot grow this past the bound."""


def _name(value: object, width: int) -> str:
    shown = _NAMES.get(value)
    if shown is None:
        if len(_NAMES) >= _NAMES_MAX:
            _NAMES.clear()
        # Shown, not stripped: an escape in a name is a sign worth seeing.
        shown = _NAMES[value] = one_line(str(value), width)
    return shown


def _shown(line: LogLine) -> _Row:
    raw = line.text
    text = log_text(raw)
    node, replica = line.node, line.replica_id
    return (
        line.seq,
        line.ts,
        line.rank,
        None if node is None else _name(node, 64),
        _name(line.level, 16),
        _name(line.source, 24),
        text,
        # log_text cuts only a line longer than it shows (and then ends it in "…").
        line.cut or (len(raw) > LOG_DISPLAY_CAP and text.endswith("…")),
        line.sim_ts,
        None if replica is None else _name(replica, 64),
        False,
    )


_Row = tuple[
    int, datetime, int | None, str | None, str, str, str, bool, datetime | None, str | None, bool
]
"""A held line: `ShownLine`'s fields as a plain tuple (see the module docstring)."""
_SEQ: Final = 0
_TS: Final = 1
_LEVEL: Final = 4
_TEXT: Final = 6
_SIM_TS: Final = 8
_MARKER: Final = 10
_EVICTED: _Row = (0, _EPOCH, None, None, "", "", "", False, None, None, True)
"""What an evicted line's slot holds until the list is compacted."""


def _cost(row: _Row) -> int:
    return LINE_OVERHEAD + sys.getsizeof(row[_TEXT])


def _at(row: _Row) -> datetime:
    return row[_SIM_TS] or row[_TS]


class LogBuffer:
    """A contiguous window of a run's log lines, oldest first, within both caps."""

    def __init__(self, max_lines: int = 20_000, max_bytes: int = 8 * 2**20) -> None:
        if max_lines < 1 or max_bytes < 1:
            raise ValueError("a log buffer holds at least one line and one byte")
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._lines: list[_Row] = []
        self._head = 0
        """Index of the oldest held line in `_lines` (evicting moves it; compacted lazily)."""
        self._nbytes = 0
        self._high = 0
        """The highest seq ever taken from the live end (dedupe survives eviction)."""
        self.dropped_oldest = 0
        """Lines evicted from the start to make room (scrolling back fetches them again)."""
        self.dropped_newest = 0
        """Lines evicted from the end to make room for older ones (see `detached`)."""
        self.missed_newer = 0
        """Live lines not stored while `detached` (the caption's `1,234 new`)."""
        self.detached = False
        """The newest lines were evicted for older ones: live lines are counted in
        `missed_newer`, not stored, until `clear()` (jump to the end and follow again)."""
        self.changes = 0
        """Bumped by every change (a cheap redraw counter)."""
        self._search: tuple[str, bool, Callable[[str], bool]] | None = None

    # ------------------------------------------------------------ size

    def __len__(self) -> int:
        return len(self._lines) - self._head

    @property
    def nbytes(self) -> int:
        """The bytes the held lines cost (their texts plus `LINE_OVERHEAD` each)."""
        return self._nbytes

    @property
    def first_seq(self) -> int | None:
        """The seq of the oldest held log line (markers have none); None when empty."""
        for i in range(self._head, len(self._lines)):
            if not self._lines[i][_MARKER]:
                return self._lines[i][_SEQ]
        return None

    @property
    def last_seq(self) -> int | None:
        """The seq of the newest held log line; None when empty."""
        for i in range(len(self._lines) - 1, self._head - 1, -1):
            if not self._lines[i][_MARKER]:
                return self._lines[i][_SEQ]
        return None

    @property
    def high_seq(self) -> int:
        """The highest seq the live end has taken (0 before any): a reconnect resumes
        after it (`since_seq`), whatever was evicted since."""
        return self._high

    def line(self, i: int) -> ShownLine:
        """The `i`-th held line, oldest first (negative counts from the newest)."""
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return ShownLine._make(self._lines[self._head + i])

    def lines(self, start: int, stop: int) -> list[ShownLine]:
        """Held lines `start` .. `stop - 1` (clamped), for drawing the visible rows."""
        start, stop = max(0, start), min(len(self), stop)
        return [ShownLine._make(row) for row in self._lines[self._head + start : self._head + stop]]

    # ------------------------------------------------------------ adding

    def add(self, line: LogLine) -> bool:
        """Append a line from the live stream. False when its seq is not newer than every
        line taken before (a replay: dedupe), or while `detached` (counted, not stored)."""
        if line.seq <= self._high:
            return False
        self._high = line.seq
        if self.detached:
            self.missed_newer += 1
            return False
        self._append(_shown(line))
        return True

    def truncated(self, dropped: int) -> None:
        """The server's `log.truncated`: `dropped` lines past its retention are gone. Shown
        as a line where the gap is, so the operator sees that something is missing."""
        if self.detached:
            return
        last = self._lines[-1] if len(self) else None
        text = (
            f"⋯ {integer(dropped)} older {'line' if dropped == 1 else 'lines'} are gone "
            "(past the backend's log retention)"
        )
        self._append(
            (
                last[_SEQ] if last is not None else 0,
                last[_TS] if last is not None else _EPOCH,
                None,
                None,
                "warning",
                "ito",
                text,
                False,
                last[_SIM_TS] if last is not None else None,
                None,
                True,
            )
        )

    def add_older(self, lines: Sequence[LogLine]) -> int:
        """Prepend a `/logs/page` answer (oldest first); only lines older than every held
        one are taken. To stay within the caps the newest held lines are evicted (the
        buffer is then `detached`). Returns the number of lines taken."""
        first = self.first_seq
        limit = first if first is not None else self._high + 1
        if first is None and self._high == 0:
            limit = sys.maxsize
        older: list[_Row] = []
        prev = -1
        for raw in lines:
            if raw.seq < limit and raw.seq > prev:
                older.append(_shown(raw))
                prev = raw.seq
        if not older:
            return 0
        # More than fits: keep the newest of the page (closest to what is held).
        costs = [_cost(x) for x in older]
        total = sum(costs)
        skip = max(0, len(older) - self.max_lines)
        total -= sum(costs[:skip])
        while skip < len(older) and total > self.max_bytes:
            total -= costs[skip]
            skip += 1
        older = older[skip:]
        if not older:
            return 0
        self._lines = older + self._lines[self._head :]
        self._head = 0
        self._nbytes += total
        if self._high == 0:
            self._high = max(x[_SEQ] for x in self._lines if not x[_MARKER])
        while len(self) > self.max_lines or self._nbytes > self.max_bytes:
            gone = self._lines.pop()
            self._nbytes -= _cost(gone)
            if not gone[_MARKER]:
                self.dropped_newest += 1
                self.detached = True
        self.changes += 1
        return len(older)

    def clear(self) -> None:
        """Forget every line (a new filter, or a jump back to the live end that reopens
        the stream with `tail`). Counters restart; dedupe restarts too."""
        self._lines = []
        self._head = 0
        self._nbytes = 0
        self._high = 0
        self.dropped_oldest = self.dropped_newest = self.missed_newer = 0
        self.detached = False
        self.changes += 1

    def _append(self, row: _Row) -> None:
        lines = self._lines
        lines.append(row)
        self._nbytes += LINE_OVERHEAD + sys.getsizeof(row[_TEXT])
        held = len(lines) - self._head
        while held > 1 and (held > self.max_lines or self._nbytes > self.max_bytes):
            gone = lines[self._head]
            # Let the line go now, not at the next compaction: until then the list held
            # up to twice the lines the caps allow (bench 18.13: ~18,000 rows held for a
            # 4 MiB cap, 4 MB of RSS more than the cap says).
            lines[self._head] = _EVICTED
            self._head += 1
            held -= 1
            self._nbytes -= LINE_OVERHEAD + sys.getsizeof(gone[_TEXT])
            if not gone[_MARKER]:
                self.dropped_oldest += 1
        if self._head > 1024 and self._head * 2 > len(lines):
            # Compact now and then: O(1) amortised per line, and the list never has more
            # than twice as many slots as lines held.
            del lines[: self._head]
            self._head = 0
        self.changes += 1

    # ------------------------------------------------------------ finding

    def search(
        self, needle: str, start: int, *, backwards: bool = False, regex: bool = False
    ) -> int | None:
        """The index of the first line from `start` (itself included; going back when
        `backwards`) whose text has `needle` (case-insensitive; a regex when `regex`);
        None when none. Raises ValueError for an invalid regex. Does not wrap around."""
        if not needle:
            return None
        cached = self._search
        if cached is not None and cached[0] == needle and cached[1] == regex:
            test = cached[2]
        else:
            test = compile_search(needle, regex=regex)
            self._search = (needle, regex, test)
        n = len(self)
        lines, head = self._lines, self._head
        span = range(min(start, n - 1), -1, -1) if backwards else range(max(start, 0), n)
        for i in span:
            if test(lines[head + i][_TEXT]):
                return i
        return None

    def first_error(self, start: int = 0) -> int | None:
        """The index of the first line from `start` of level error or worse; None if none."""
        lines, head = self._lines, self._head
        for i in range(max(start, 0), len(self)):
            row = lines[head + i]
            rank = LEVEL_RANK.get(row[_LEVEL])
            if rank is not None and rank >= _ERROR and not row[_MARKER]:
                return i
        return None

    def index_at(self, when: datetime) -> int | None:
        """The index of the first line written at or after `when` (`sim_ts`, else `ts`);
        None when every held line is older (or none is held). When the oldest held line is
        already after `when`, 0: compare `line(0).at` to know whether to page back."""
        lines, head = self._lines, self._head
        for i in range(len(self)):
            row = lines[head + i]
            if not row[_MARKER] and _at(row) >= when:
                return i
        return None
