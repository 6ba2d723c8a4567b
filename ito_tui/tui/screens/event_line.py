"""EventLineScreen: one event-log line in full, wrapped, with the event's fields; `c` copies it.

The log draws one line per event and cuts it where the pane ends, which is often where the
useful part starts (`gate gate_5a95a2862915_pre…`). Enter or a click on a line opens this
view: the whole text as the backend's words made it (literal: `[bold]` stays `[bold]`,
never markup or a terminal escape), when and what the event was, and its data fields
when the log kept the event. The copy goes through Textual's `App.copy_to_clipboard`
(OSC 52), as the booking picker's ssh command does. `l` closes the view and opens the
run's job log at the event's time (the lines around a fault or a gate result).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ito_tui.format import integer
from ito_tui.textsafe import one_line, visible
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.messages import OpenLogsAt
from ito_tui.tui.widgets.eventlog import LogEntry
from ito_tui.tui.widgets.steady_footer import SteadyFooter

FIELD_WIDTH = 12
"""Width of the field names' column."""
MAX_FIELDS = 200
"""An event with more data fields than this shows the first ones (and says so)."""


def line_of(entry: LogEntry) -> str:
    """The whole log line as one string, as it is copied: time, seq, type and text."""
    stamp = f"{entry.at:%Y-%m-%d %H:%M:%S} UTC"
    return f"{stamp}  {entry.seq}  {visible(entry.type)}  {visible(entry.text)}"


def data_fields(entry: LogEntry) -> list[tuple[str, str]]:
    """The event's data as (dotted name, value) pairs, when the entry kept its event."""
    event = getattr(entry, "event", None)
    data = getattr(event, "data", None)
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    if not isinstance(data, Mapping):
        return []
    return list(_flatten(data, ""))


def _flatten(data: Mapping[Any, Any], prefix: str) -> Iterator[tuple[str, str]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _flatten(value, f"{name}.")
        elif isinstance(value, list | tuple):
            yield name, ", ".join(str(v) for v in value) or "[]"
        else:
            yield name, "null" if value is None else str(value)


class EventLineScreen(StyledOnFirstShow, ModalScreen[None]):
    """One event-log line in full over the run screen; Esc goes back to the log."""

    CSS_PATH = "event_line.tcss"

    BINDINGS = [
        Binding(
            "c",
            "copy",
            "Copy",
            id="event_line.copy",
            tooltip="Copy the whole line to the clipboard (OSC 52)",
        ),
        Binding(
            "l",
            "logs",
            "Logs here",
            id="event_line.logs",
            tooltip="Open the job log at this event's time (the Logs tab)",
        ),
        Binding(
            "escape,enter,q",
            "close",
            "Close",
            id="event_line.close",
            tooltip="Back to the event log",
        ),
    ]

    def __init__(self, entry: LogEntry, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.entry = entry

    @property
    def line(self) -> str:
        """What `c` copies."""
        return line_of(self.entry)

    def compose(self) -> ComposeResult:
        entry = self.entry
        with VerticalScroll(id="event-line", classes="dialog"):
            yield Static(
                Content.assemble(
                    (f"Event {integer(entry.seq)}", "bold"), " · ", (one_line(entry.type), "bold")
                ),
                id="event-line-title",
            )
            # Backend words as plain text: Content never reads markup in them.
            yield Static(Content(visible(entry.text)), id="event-line-text")
            yield Static(self._fields(), id="event-line-fields")
        yield SteadyFooter()

    def _fields(self) -> Content:
        entry = self.entry
        rows = [
            ("time", f"{entry.at:%Y-%m-%d %H:%M:%S} UTC"),
            ("seq", str(entry.seq)),
            ("type", entry.type),
            ("kind", str(getattr(entry, "kind", "")) or "—"),
            ("severity", entry.severity),
        ]
        data = data_fields(entry)
        rows += data[:MAX_FIELDS]
        if len(data) > MAX_FIELDS:
            rows.append(("…", f"{len(data) - MAX_FIELDS} more fields"))
        parts: list[Content | tuple[str, str] | str] = []
        for i, (name, value) in enumerate(rows):
            if i:
                parts.append("\n")
            parts.append((f"{one_line(name, FIELD_WIDTH - 1):<{FIELD_WIDTH}}", "$text-muted"))
            parts.append(visible(value, keep_newlines=False))
        return Content.assemble(*parts)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.line)
        self.notify("Copied the whole event line.", title="Clipboard (OSC 52)", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_logs(self) -> None:
        # The run screen under this view handles OpenLogsAt (it is not this modal's
        # parent, so the message goes to it, not up from here).
        stack = self.app.screen_stack
        below = stack[-2] if len(stack) > 1 and stack[-1] is self else None
        label = f"event {integer(self.entry.seq)} {one_line(self.entry.type, 40)}"
        self.dismiss(None)
        if below is not None:
            below.post_message(OpenLogsAt(self.entry.at, label))
