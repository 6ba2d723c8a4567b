"""The Logs tab's keys: search (`/`, `n`, `N`), the first error (`e`), the filters.

`LogsKeys` is `LogsPane`'s base, as `RunActions` is the run screen's: the bindings,
`check_action` (nothing but Close while the backend has no `runs.logs`) and the
actions. A filter goes to the server (`LogFilter.query`: the stream and the pages are
asked again with it), so the bounded buffer holds only lines that match; a search
looks through the lines held, then asks the server for the newest older match (a
`/regex/` search, which the server's substring `q=` cannot answer, stays with the lines
held).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import on, work
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input

from ito_tui.client import ItoError
from ito_tui.contract import LogSource
from ito_tui.state.logbuffer import LogBuffer, LogFilter
from ito_tui.textsafe import one_line, safe
from ito_tui.tui.run_logs import new_buffer

if TYPE_CHECKING:
    from ito_tui.tui.run_logs import LogFollower
    from ito_tui.tui.widgets.log_view import LogView

__all__ = ["LEVELS", "SOURCES", "LogsKeys", "parse_ranks"]

LEVELS: tuple[str | None, ...] = (None, "info", "warning", "error")
"""Minimum levels in the order `l` cycles them; None shows every line (debug too)."""
SOURCES: tuple[str | None, ...] = (None, *(str(s) for s in LogSource))
"""Sources in the order `s` cycles them; None shows all."""


def parse_ranks(text: str) -> frozenset[int]:
    """`0,3,8-11` as ranks; raises ValueError on anything else (the input says why)."""
    ranks: set[int] = set()
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        lo, hi = int(first), int(last or first)
        if lo < 0 or hi < lo or hi - lo > 4096:
            raise ValueError(part)
        ranks.update(range(lo, hi + 1))
    return frozenset(ranks)


def _binding(
    key: str, action: str, description: str, tooltip: str, *, show: bool = True
) -> Binding:
    name = action.partition("(")[0] + ("_back" if action == "next(True)" else "")
    return Binding(key, action, description, show=show, id=f"logs.{name}", tooltip=tooltip)


class LogsKeys(Widget):
    """The bindings and actions of the Logs tab (`LogsPane` builds the rest)."""

    BINDINGS = [
        _binding("slash", "search", "Search", "Search the log (n/N: next/previous match)"),
        _binding("n", "next(False)", "Next", "Next (newer) match", show=False),
        _binding("N", "next(True)", "Previous", "Previous (older) match", show=False),
        _binding("e", "first_error", "Error", "Jump to the first error held"),
        _binding("l", "cycle_level", "Level", "Cycle the minimum level shown"),
        _binding("s", "cycle_source", "Source", "Cycle the source shown", show=False),
        _binding("r", "ranks", "Ranks", "Show only some ranks (0,3,8-11)", show=False),
        _binding("c", "clear", "Clear", "Clear the filters and the search", show=False),
        _binding("escape", "close_input", "Close", "Close the input", show=False),
    ]

    # What the pane provides.
    view: LogView
    buffer: LogBuffer
    filter: LogFilter
    offered: bool
    streaming: bool
    label: str
    note: str

    def _caption(self) -> None:
        raise NotImplementedError

    def _follower(self) -> LogFollower:
        raise NotImplementedError

    def _swap(self, buffer: LogBuffer) -> None:
        raise NotImplementedError

    def _start(self, *, fresh: bool = False) -> None:
        raise NotImplementedError

    async def _jump_to_seq(self, seq: int, *, around: bool = False) -> None:
        raise NotImplementedError

    def action_search(self) -> None:
        search = self.query_one("#logs-search", Input)
        search.display = True
        search.value = self.view.needle
        search.focus()

    @on(Input.Submitted, "#logs-search")
    def _search(self, event: Input.Submitted) -> None:
        event.stop()
        needle = event.value.strip()
        pattern = None
        if len(needle) > 2 and needle.startswith("/") and needle.endswith("/"):
            try:  # `/rank(8|9)\]/`: a regex, case-insensitive, over the lines held
                pattern = re.compile(needle[1:-1], re.IGNORECASE)
            except re.error as exc:
                self.note = f"not a regex: {one_line(str(exc), 40)}"
                self._caption()
                return
        event.input.display = False
        self.view.set_needle(needle, pattern)
        self.view.focus()
        if needle:
            self._find(self.view.bottom_index, backwards=True)
        self._caption()

    def action_next(self, backwards: bool) -> None:
        if not self.view.needle:
            self.action_search()
            return
        current = self.view.current
        if current is None:
            current = self.view.bottom_index + 1 if backwards else self.view.top_index - 1
        self._find(current - 1 if backwards else current + 1, backwards=backwards)

    def _find(self, start: int, *, backwards: bool) -> None:
        needle, buffer, regex = self.view.needle, self.buffer, self.view.pattern is not None
        term = needle[1:-1] if regex else needle
        at = max(0, min(start, len(buffer) - 1))
        index = buffer.search(term, at, backwards=backwards, regex=regex)
        if start < 0 or start >= len(buffer):
            index = None
        if index is not None:
            self.note = ""
            self.view.show_line(index)
        elif regex:
            # The server's `q=` is a substring: a regex searches the lines held only.
            self.note = f"no {'older' if backwards else 'newer'} match held"
        elif backwards and self.buffer.first_seq is not None:
            self._find_older(q=needle, what=f"“{needle}”")
        else:
            self.note = f"no newer “{needle}”"
        self._caption()

    def action_first_error(self) -> None:
        index = self.buffer.first_error()
        if index is not None:
            self.note = ""
            self.view.show_line(index)
            self._caption()
        else:
            self._find_older(level="error", what="error")

    @work(group="logs-fetch", exclusive=True, exit_on_error=False)
    async def _find_older(self, *, what: str, **query: str) -> None:
        """The newest line before the buffer matching `query`, shown in a fresh buffer."""
        try:
            line = await self._follower().before(self.buffer.first_seq, **query)
        except ItoError as exc:
            self.note = f"older lines: {one_line(str(exc), 60)}"
            self._caption()
            return
        if line is None:
            self.note = f"no {what} in the log"
            self._caption()
            return
        needle, pattern = self.view.needle, self.view.pattern
        await self._jump_to_seq(line.seq)
        self.view.set_needle(needle, pattern)

    # ------------------------------------------------------------ filters

    def _set_filter(self, **change: object) -> None:
        values = {
            "ranks": self.filter.ranks,
            "level": self.filter.level,
            "sources": self.filter.sources,
            "q": self.filter.q,
            **change,
        }
        self.filter = LogFilter(**values)  # type: ignore[arg-type]  # checked by the callers
        self.label = self.note = ""
        self._swap(new_buffer())
        self.view.set_following(True)  # when it was paused, this starts the stream
        if not self.streaming:
            self._start()
        self._caption()

    def action_cycle_level(self) -> None:
        level = self.filter.level
        self._set_filter(level=LEVELS[(LEVELS.index(level) + 1) % len(LEVELS)])

    def action_cycle_source(self) -> None:
        now = next(iter(self.filter.sources), None) if len(self.filter.sources) == 1 else None
        nxt = SOURCES[(SOURCES.index(now) + 1) % len(SOURCES)] if now in SOURCES else None
        self._set_filter(sources=frozenset() if nxt is None else frozenset({nxt}))

    def action_ranks(self) -> None:
        ranks = self.query_one("#logs-ranks", Input)
        ranks.display = True
        ranks.value = ",".join(str(r) for r in sorted(self.filter.ranks))
        ranks.focus()

    @on(Input.Submitted, "#logs-ranks")
    def _ranks(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            ranks = parse_ranks(event.value)
        except ValueError:
            self.note = f"not a rank list: {safe(event.value)[:30]} (e.g. 0,3,8-11)"
            self._caption()
            return
        event.input.display = False
        self.view.focus()
        self._set_filter(ranks=ranks)

    def action_clear(self) -> None:
        self.view.set_needle("")
        self._set_filter(ranks=frozenset(), level=None, sources=frozenset(), q=None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_input":
            return any(i.display for i in self.query(Input))
        return self.offered

    def action_close_input(self) -> None:
        for field in self.query(Input):
            field.display = False
        self.view.focus()
