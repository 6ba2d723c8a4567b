"""Checkpoints and faults as a timeline, with fault-tolerance SLO breaches highlighted.

The faults and the fleet's node events below them are selectable (up/down while the
timeline has the keys): Enter posts `OpenLogsAt` with the time of the one selected, and
the run screen shows the job log there (the Xid, the NCCL timeout, the traceback).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.contract import Checkpoint, FaultRecord
from ito_tui.format import MISSING, duration, fixed, integer, stage_label, stamps
from ito_tui.textsafe import one_line, safe
from ito_tui.tui.messages import OpenLogsAt

DETECT_SLO_S = 600.0
"""Fault detection must take less than 10 minutes (simulated seconds)."""
RESUME_SLO_S = 900.0
"""Resuming after a fault must take less than 15 minutes (simulated seconds)."""
SAVED_FROM = 50
"""Pane width from which the checkpoint table says when each was saved."""
WORDS_FROM = 66
"""Pane width from which its headers are words ("blocking s"), not abbreviations."""


NODE_ROWS = 8
"""Node events listed under the faults (the newest ones)."""


class Incident(Protocol):
    """What the timeline reads of a `state.NodeIncident` (a node or straggler event)."""

    @property
    def at(self) -> datetime: ...

    @property
    def type(self) -> str: ...

    @property
    def hostname(self) -> str: ...

    @property
    def detail(self) -> str: ...

    @property
    def words(self) -> str: ...


def fault_times(state: Any, log: Iterable[Any] = ()) -> dict[str, datetime]:
    """When each fault of `state` (a `RunState`) was detected, on the run's clock: from
    the state where it keeps them (`fault_times`), else from the `fault.detected` events
    of the event log (`state.EventLog` entries), else from the fault's first node event.
    The detection is where the job log has the NCCL timeouts and the traceback."""
    times: dict[str, datetime] = dict(getattr(state, "fault_times", None) or {})
    for entry in log:
        event = getattr(entry, "event", None)
        if entry.type == "fault.detected" and event is not None:
            fault_id = getattr(event.data, "fault_id", None)
            if fault_id:
                times.setdefault(fault_id, event.at)
    for incident in getattr(state, "node_events", ()):
        fault_id = getattr(incident, "fault_id", None)
        if fault_id:
            times.setdefault(fault_id, incident.at)  # oldest first: the failure
    return times


def write_gb_per_s(ckpt: Checkpoint) -> float | None:
    """Checkpoint write bandwidth: size over persist time."""
    if ckpt.persist_s <= 0:
        return None
    return ckpt.size_gb / ckpt.persist_s


def detect_breached(fault: FaultRecord) -> bool:
    return "detect" in fault.slo_breached or (fault.detected_after_s or 0.0) > DETECT_SLO_S


def resume_breached(fault: FaultRecord) -> bool:
    return "resume" in fault.slo_breached or (fault.resumed_after_s or 0.0) > RESUME_SLO_S


class Timeline(Widget, can_focus=True):
    """Two tables: checkpoints (newest last) and faults with SLO breaches marked; then the
    fleet's node events. Faults and node events are selectable (Enter: their logs)."""

    DEFAULT_CSS = """
    Timeline { height: auto; padding: 0 1; }
    Timeline > .timeline--breach { color: $gate-failed; text-style: bold reverse; }
    Timeline > .timeline--ok { color: $gate-passed; }
    Timeline > .timeline--title { text-style: bold; }
    Timeline > .timeline--muted { color: $text-muted; }
    Timeline > .timeline--cursor { background: $boost; }
    Timeline:focus > .timeline--cursor { text-style: reverse; }
    """
    COMPONENT_CLASSES = {
        "timeline--breach",
        "timeline--ok",
        "timeline--title",
        "timeline--muted",
        "timeline--cursor",
    }
    BINDINGS = [
        Binding("up,k", "select(-1)", "Up", show=False, id="timeline.up", tooltip="Previous"),
        Binding("down,j", "select(1)", "Down", show=False, id="timeline.down", tooltip="Next"),
        Binding(
            "enter",
            "open_logs",
            "Logs here",
            id="timeline.logs",
            tooltip="Open the job log at the selected fault's or node event's time",
        ),
    ]

    checkpoints: reactive[tuple[Checkpoint, ...]] = reactive(tuple, always_update=True, layout=True)
    """Checkpoints of the run, oldest first."""
    faults: reactive[tuple[FaultRecord, ...]] = reactive(tuple, always_update=True, layout=True)
    """Faults of the run, oldest first."""
    max_rows: reactive[int] = reactive(12)
    """Checkpoint rows shown (the newest ones)."""
    times: reactive[Mapping[str, datetime]] = reactive(dict, always_update=True, repaint=False)
    """When each fault began (`fault_times`), by fault id: a fault without one cannot
    open the logs."""
    incidents: reactive[tuple[Incident, ...]] = reactive(tuple, always_update=True, layout=True)
    """The fleet's node and straggler events, oldest first (`RunState.node_events`)."""
    selected: reactive[int] = reactive(0)
    """The selected item: a fault (0 … faults-1), then a node event shown."""

    now: datetime | None = None
    """The session's clock when last painted: a time not on its day carries its date."""

    _item_rows: tuple[tuple[int, int], ...] = ()
    """(First row, rows) of each selectable item as last rendered (wrapped at the pane's
    width): where to scroll to show the selected one."""

    def set_faults(
        self,
        faults: tuple[FaultRecord, ...],
        incidents: tuple[Incident, ...],
        times: Mapping[str, datetime],
    ) -> None:
        """The run's faults, node events and the faults' times (`fault_times`), at once."""
        had = bool(self.faults or self.incidents)
        self.times = times
        self.faults = faults
        self.incidents = incidents
        if had != bool(faults or incidents):
            self.refresh_bindings()  # "Logs here" shows once there is something to open

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open_logs", "select"):
            return bool(self.faults or self.incidents)
        return True

    def _items(self) -> list[tuple[datetime | None, str]]:
        """The selectable items in order: (when, label) for each fault, then node event."""
        items: list[tuple[datetime | None, str]] = [
            (self.times.get(f.fault_id), f"fault {f.fault_id} {f.kind} on {f.node or '?'}")
            for f in self.faults
        ]
        items += [(i.at, i.words) for i in self._shown_incidents()]
        return items

    def _shown_incidents(self) -> tuple[Incident, ...]:
        return self.incidents[-NODE_ROWS:]

    def action_select(self, delta: int) -> None:
        count = len(self._items())
        if not count:
            return
        self.selected = max(0, min(count - 1, self.selected + delta))
        rows = self._item_rows
        parent = self.parent
        if self.selected < len(rows) and isinstance(parent, ScrollableContainer):
            y, height = rows[self.selected]
            parent.scroll_to_region(Region(0, y, self.size.width, height), animate=False)

    def action_open_logs(self) -> None:
        items = self._items()
        if not items:
            return
        when, label = items[min(self.selected, len(items) - 1)]
        if when is None:
            self.notify("No time is known for this fault.", markup=False)
            return
        self.post_message(OpenLogsAt(when, one_line(label, 80)))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _cursor(self, index: int) -> str:
        """The cursor's style for item `index` (nothing when not selected)."""
        if index != self.selected or not self.has_focus:
            return ""
        return str(self.get_component_rich_style("timeline--cursor", partial=True))

    def render(self) -> RenderableType:
        title = self.get_component_rich_style("timeline--title", partial=True)
        wide = self.size.width >= 70
        blocks = self._fault_blocks() if self.faults and not wide else []
        parts: list[RenderableType] = [
            Text(f"Checkpoints ({len(self.checkpoints)})", style=title),
            self._checkpoint_table(self.checkpoints[-self.max_rows :], self.size.width, self.now)
            if self.checkpoints
            else Text("none yet"),
            Text(f"\n{self._faults_title()}", style=title),
            (self._fault_table(self.faults) if wide else Text("\n").join(blocks))
            if self.faults
            else Text("none"),
        ]
        if self.incidents:
            parts += [
                Text(f"\nNode events ({len(self.incidents)})", style=title),
                self._incident_lines(len(self.faults)),
            ]
        self._item_rows = self._measure(parts, blocks, wide)
        return Group(*parts)

    def _faults_title(self) -> str:
        """`Faults (2) · SLO …` on one line where it fits, else the SLO on lines of its own,
        never wrapped mid-phrase (`resume < 15` / `min`)."""
        faults, slo = f"Faults ({len(self.faults)})", "SLO detect < 10 min, resume < 15 min"
        for text in (f"{faults} · {slo}", f"{faults}\n{slo}"):
            if max(len(line) for line in text.splitlines()) <= self.size.width:
                return text
        return f"{faults}\nSLO detect < 10 min,\nresume < 15 min"

    def _measure(
        self, parts: list[RenderableType], blocks: list[Text], wide: bool
    ) -> tuple[tuple[int, int], ...]:
        """(First row, rows) of each fault and node event in `parts` at this width."""
        console = self.app.console
        options = console.options.update_width(max(1, self.size.width))

        def rows(renderable: RenderableType) -> int:
            return len(console.render_lines(renderable, options, pad=False))

        y = sum(rows(part) for part in parts[:3])
        items: list[tuple[int, int]] = []
        if wide:
            y += 1  # the table's header; a row each
            items += [(y + i, 1) for i in range(len(self.faults))]
            y += len(self.faults)
        else:
            for block in blocks:
                items.append((y, rows(block)))
                y += items[-1][1]
        if not self.faults:
            y += 1  # "none"
        if self.incidents:
            y += 2  # the blank line and the title
            items += [(y + i, 1) for i in range(len(self._shown_incidents()))]
        return tuple(items)

    def _incident_lines(self, first: int) -> Text:
        """The newest node events, one line each, in the event log's words (time on the
        run's clock, UTC, with its date when it is not today's)."""
        muted = self.get_component_rich_style("timeline--muted", partial=True)
        breach = self.get_component_rich_style("timeline--breach", partial=True)
        out = Text(no_wrap=True, overflow="ellipsis")
        shown = self._shown_incidents()
        times = stamps([i.at for i in shown], self.now or shown[-1].at)
        for i, (incident, at) in enumerate(zip(shown, times, strict=True)):
            if i:
                out.append("\n")
            start = len(out)
            out.append(f"{at} ", muted)
            bad = incident.type in ("node.failed", "straggler.detected", "node.degraded")
            style = breach if incident.type == "node.failed" else "" if bad else muted
            out.append(one_line(incident.words), style)
            if cursor := self._cursor(first + i):
                out.stylize(cursor, start, len(out))
        return out

    @staticmethod
    def _checkpoint_table(ckpts: Sequence[Checkpoint], width: int, now: datetime | None) -> Table:
        """Newest last; when each was saved (UTC, dated when not today's) and the headers in
        words where it fits."""
        table = Table(box=None, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
        times = stamps([c.created_at for c in ckpts], now or ckpts[-1].created_at)
        saved = width >= SAVED_FROM + len(times[0]) - len("00:00:00")
        words = width >= WORDS_FROM
        columns = [
            "stage",
            "step",
            "GB",
            *(("blocking s", "persist s") if words else ("blk s", "pers s")),
            "GB/s",
        ]
        if saved:
            columns.insert(0, "saved UTC")
        for col in columns:
            left = col in ("stage", "saved UTC")
            table.add_column(col, justify="left" if left else "right", no_wrap=True)
        for c, at in zip(ckpts, times, strict=True):
            bw = write_gb_per_s(c)
            table.add_row(
                *((at,) if saved else ()),
                stage_label(c.stage),
                integer(c.step),
                fixed(c.size_gb, 0, grouping=True),
                fixed(c.blocking_s, 1),
                fixed(c.persist_s, 0),
                MISSING if bw is None else fixed(bw, 1),
            )
        return table

    def _fault_blocks(self) -> list[Text]:
        """Faults as two lines each (wrapped where they must), for panes too narrow for
        the table; one `Text` per fault."""
        breach = self.get_component_rich_style("timeline--breach", partial=True)
        blocks: list[Text] = []
        for i, f in enumerate(self.faults):
            out = Text()
            step = "" if f.step is None else f" at step {integer(f.step)}"
            out.append(f"{safe(f.kind)} on {safe(f.node or '?')}{step}\n  detected ")
            out.append(
                f"after {duration(f.detected_after_s)}", breach if detect_breached(f) else ""
            )
            if f.resumed_after_s is not None:
                out.append(" · resumed ")
                out.append(
                    f"after {duration(f.resumed_after_s)}",
                    breach if resume_breached(f) else "",
                )
            else:
                out.append(" · not resumed yet")
            if f.lost_steps is not None:
                out.append(f" · lost {integer(f.lost_steps)} steps")
            if detect_breached(f) or resume_breached(f):
                out.append(" ⚠ SLO", breach)
            if cursor := self._cursor(i):
                out.stylize(cursor)
            blocks.append(out)
        return blocks

    def _fault_table(self, faults: Sequence[FaultRecord]) -> Table:
        breach = self.get_component_rich_style("timeline--breach", partial=True)
        table = Table(box=None, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
        for col in ("kind", "node", "step", "detected", "resumed", "lost"):
            table.add_column(col, justify="left" if col in ("kind", "node") else "right")
        for i, f in enumerate(faults):
            detected = Text(f"after {duration(f.detected_after_s)}")
            if detect_breached(f):
                detected = Text(f"⚠ {duration(f.detected_after_s)} SLO", style=breach)
            if f.resumed_after_s is None:
                resumed = Text("…" if not f.recovered else MISSING)
            elif resume_breached(f):
                resumed = Text(f"⚠ {duration(f.resumed_after_s)} SLO", style=breach)
            else:
                resumed = Text(f"after {duration(f.resumed_after_s)}")
            table.add_row(
                Text(safe(f.kind)),
                Text(safe(f.node) if f.node else MISSING),
                MISSING if f.step is None else integer(f.step),
                detected,
                resumed,
                MISSING if f.lost_steps is None else integer(f.lost_steps),
                style=self._cursor(i),
            )
        return table
