"""The event log panel: bounded, newest last, filtered by kind and searched by text.

The log itself (`state.EventLog`) is bounded and owned by the screen's tracker; the
screen hands this widget the entries that match its filter (`entries`), and it draws
only the tail that fits, so its cost does not grow with the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.format import stamps
from ito_tui.textsafe import one_line

FILTERS: tuple[str | None, ...] = (None, "gates", "faults", "checkpoints", "proposals", "budget")
"""Kind filters in the order the filter key cycles them; None shows all."""
SEQ_FROM = 56
"""Text width from which a line also shows the event's seq (its time always shows)."""
TYPE_FROM = 70
"""Text width from which a line also shows the event's type."""


class LogEntry(Protocol):
    """What the widget reads of a `state.EventLog` entry."""

    @property
    def seq(self) -> int: ...

    @property
    def at(self) -> datetime: ...

    @property
    def type(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def text(self) -> str: ...


class EventLogView(Widget, can_focus=True):
    """The tail of the run's event log that fits the widget; scroll back with page keys."""

    DEFAULT_CSS = """
    EventLogView { height: 1fr; padding: 0 1; }
    EventLogView > .eventlog--seq { color: $text-muted; }
    EventLogView > .eventlog--warning { color: $warning; }
    EventLogView > .eventlog--error { color: $gate-failed; text-style: bold; }
    EventLogView > .eventlog--human { color: $needs-human; text-style: bold; }
    EventLogView > .eventlog--cursor { background: $boost; }
    EventLogView:focus > .eventlog--cursor { text-style: reverse; }
    """
    COMPONENT_CLASSES = {
        "eventlog--seq",
        "eventlog--warning",
        "eventlog--error",
        "eventlog--human",
        "eventlog--cursor",
    }

    BINDINGS = [
        Binding(
            "up,k",
            "cursor(1)",
            "Older line",
            show=False,
            id="eventlog.up",
            tooltip="Select the line above",
        ),
        Binding(
            "down,j",
            "cursor(-1)",
            "Newer line",
            show=False,
            id="eventlog.down",
            tooltip="Select the line below",
        ),
        Binding(
            "enter",
            "open_line",
            "Open line",
            id="eventlog.open",
            tooltip="Show the selected line in full (wrapped, its fields; c copies)",
        ),
        Binding(
            "pageup",
            "scroll_log(1)",
            "Older",
            show=False,
            id="eventlog.older",
            tooltip="Show older events",
        ),
        Binding(
            "pagedown",
            "scroll_log(-1)",
            "Newer",
            show=False,
            id="eventlog.newer",
            tooltip="Show newer events",
        ),
        Binding(
            "end",
            "scroll_log(0)",
            "Newest",
            show=False,
            id="eventlog.newest",
            tooltip="Jump to the newest event",
        ),
    ]

    entries: reactive[Sequence[Any]] = reactive(tuple, always_update=True)
    """The entries matching `kind` and `search` (`LogEntry`s), oldest first."""
    kind: reactive[str | None] = reactive(None, repaint=False)
    """Kind filter (gates, faults, checkpoints, proposals, budget) or None for all (the
    screen applies it to what it hands over as `entries`)."""
    search: reactive[str] = reactive("", repaint=False)
    """Case-insensitive text search; empty shows everything (applied like `kind`)."""
    back: reactive[int] = reactive(0)
    """Pages scrolled back from the newest entry (0 follows the tail)."""
    cursor: reactive[int] = reactive(0)
    """The selected line, in rows up from the newest line shown (0: the newest)."""
    now: datetime | None = None
    """The session's clock as of `entries` (set before them): lines of another day than
    its carry their date. None: the newest line's day."""

    @dataclass
    class LineOpened(Message):
        """The operator asked to see a line in full (Enter, or a click on it)."""

        entry: LogEntry

    _shown: Sequence[Any] = ()
    """The entries drawn, oldest first (what the cursor and a click point at)."""
    _newest: int | None = None
    """The seq of the newest entry handed over (a new one moves a raised cursor up)."""

    def watch_entries(self, entries: Sequence[Any]) -> None:
        newest = entries[-1].seq if entries else None
        if self.cursor and self.back == 0 and self._newest is not None and newest is not None:
            # Keep a selected line selected as new lines push it up (rows count from the
            # newest): the operator reaching for it must not find another one there.
            added = sum(1 for e in entries[-self.size.height - 1 :] if e.seq > self._newest)
            self.cursor = min(self.cursor + added, max(0, self.size.height - 1))
        self._newest = newest

    def action_scroll_log(self, pages: int) -> None:
        self.back = 0 if pages == 0 else max(0, self.back + pages)

    def action_cursor(self, delta: int) -> None:
        rows = len(self._shown)
        self.cursor = max(0, min(rows - 1, self.cursor + delta)) if rows else 0

    def action_open_line(self) -> None:
        entry = self.selected
        if entry is not None:
            self.post_message(self.LineOpened(entry))

    @property
    def selected(self) -> LogEntry | None:
        """The entry the cursor is on, if any is shown."""
        shown = self._shown
        if not shown:
            return None
        entry: LogEntry = shown[max(0, len(shown) - 1 - min(self.cursor, len(shown) - 1))]
        return entry

    def on_click(self, event: events.Click) -> None:
        shown = self._shown
        if 0 <= event.y < len(shown):
            self.cursor = len(shown) - 1 - event.y
            self.post_message(self.LineOpened(shown[event.y]))

    @property
    def filter_label(self) -> str:
        label = self.kind or "all"
        return f"{label} · “{self.search}”" if self.search else label

    def render(self) -> RenderableType:
        height = max(1, self.size.height)
        entries = self.entries
        if not entries:
            self._shown = ()
            return Text(f"No events match ({self.filter_label}).", style="dim")
        end = max(height, len(entries) - self.back * height)
        shown = entries[max(0, end - height) : end]
        self._shown = shown
        selected = len(shown) - 1 - min(self.cursor, len(shown) - 1)
        seq_style = self.get_component_rich_style("eventlog--seq", partial=True)
        cursor_style = self.get_component_rich_style("eventlog--cursor", partial=True)
        # By `state.eventlog.SEVERITIES` (info is the default colour).
        styles = {
            "warn": self.get_component_rich_style("eventlog--warning", partial=True),
            "error": self.get_component_rich_style("eventlog--error", partial=True),
            "action": self.get_component_rich_style("eventlog--human", partial=True),
        }
        width = max(20, self.size.width - 2)
        out = Text(no_wrap=True, overflow="ellipsis")
        times = stamps([entry.at for entry in shown], self.now or shown[-1].at)
        for i, entry in enumerate(shown):
            if i:
                out.append("\n")
            # When it happened (UTC, as the caption says; the run's clock, as `ito-tui
            # watch` prints it); the seq, which ties a line to the API and `watch`, where
            # there is room.
            prefix = f"{times[i]} "
            if width >= SEQ_FROM:
                prefix += f"{entry.seq:>6} "
            out.append(prefix, style=seq_style)
            # Narrow panes show the summary only; it already names what happened.
            raw = f"{entry.type}  {entry.text}" if width >= TYPE_FROM else entry.text
            body = one_line(raw, max_len=width - len(prefix))
            start = len(out)
            out.append(body, style=styles.get(str(entry.severity), ""))
            if i == selected and self.has_focus:
                out.stylize(cursor_style, start - len(prefix), len(out))
        return out

    def on_focus(self) -> None:
        self.refresh()  # the selected line shows while the log has focus

    def on_blur(self) -> None:
        self.refresh()
