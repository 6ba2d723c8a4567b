"""The run screen's Nodes tab: the run's fleet (API.md v1.1 `runs.fleet`).

The quorum (id, participants / min, age, status), each replica (state, step, heartbeat
age; one behind the max step is `recovering`), then every node worst first
(`FleetTable`). The words are `state.fleet.fleet_view`'s, the ones `ito-tui nodes`
prints. `s` cycles the sort: worst first, by name, slowest step first.

The snapshot is fetched when the tab is shown and refreshed while it stays shown
(`tui/run_fleet.py: FleetRefresh`, at most every `limits.fleet_refresh_s`, never two
requests at once); a fleet event on the run stream asks for an earlier one
(`observe`, called by the run screen for each event). A backend without `runs.fleet` gets one line
saying so here and nothing else changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static

from ito_tui.client.policy import fleet_refresh_s
from ito_tui.format import duration, when
from ito_tui.state.fleet import SORTS, fleet_view
from ito_tui.textsafe import one_line, visible
from ito_tui.tui.run_fleet import CAPABILITY, FleetRefresh
from ito_tui.tui.session import shell

from .fleet_table import FleetTable, header_lines

if TYPE_CHECKING:
    from ito_tui.client.errors import ItoError
    from ito_tui.contract import EventBase, Fleet
    from ito_tui.state.fleet import FleetView, NodeRow, ReplicaRow

__all__ = ["MISSING_TEXT", "SORT_WORDS", "NodesPane", "replica_lines"]

MISSING_TEXT = f"not offered by this backend (capability {CAPABILITY})"
STEP_BUCKET = 0.05
"""Step times within this fraction of the fleet median sort as equal (see `steady`)."""
SORT_WORDS = {"worst": "worst first", "name": "by name", "step": "slowest first"}
"""How the status line names each of `state.fleet.SORTS`."""


def steady(rows: tuple[NodeRow, ...], sort: str, before: Sequence[str]) -> tuple[NodeRow, ...]:
    """`rows` (in `fleet_view`'s order) with nodes that sort the same within `STEP_BUCKET`
    of the median kept in the order they were shown in (`before`, host names): a healthy
    fleet's step times jitter by a percent at every sample, and sorting on that reshuffled
    every row at every refresh — unreadable, and the whole table rewritten (bench 18.15).
    A node whose state changes, or whose step time moves by a bucket, still moves."""
    if sort == "name" or not before:
        return rows
    shown = {host: i for i, host in enumerate(before)}

    def key(item: tuple[int, NodeRow]) -> tuple[int, float, int]:
        index, row = item
        ratio = row.ratio_value
        bucket = -round(ratio / STEP_BUCKET) if ratio is not None and math.isfinite(ratio) else 0
        severity = row.severity if sort == "worst" else 0
        return severity, bucket, shown.get(row.hostname, len(shown) + index)

    return tuple(row for _, row in sorted(enumerate(rows), key=key))


def replica_cell(row: ReplicaRow) -> str:
    """`✓ r0 healthy step 12,345 hb 1s`."""
    return (
        f"{row.glyph} {visible(row.replica_id)} {row.state} step {row.step_text} hb {row.heartbeat}"
    )


def replica_lines(rows: tuple[ReplicaRow, ...], width: int) -> list[str]:
    """The replicas packed into as few lines of `width` as their cells fit (one each at
    the narrowest): 16 replicas of a 128-node fleet take a few lines, not sixteen."""
    cells = [replica_cell(r) for r in rows]
    if not cells:
        return ["no replicas reported"]
    cell_w = max(len(c) for c in cells) + 2
    per_line = max(1, (width + 2) // cell_w)
    return [
        "".join(c.ljust(cell_w) for c in cells[i : i + per_line]).rstrip()
        for i in range(0, len(cells), per_line)
    ]


class NodesPane(Widget, can_focus=True):
    """The fleet of run `run_id`: quorum, replicas, nodes; refreshed while shown."""

    DEFAULT_CSS = """
    NodesPane { height: 1fr; }
    NodesPane > Static { height: auto; margin: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    NodesPane > #fleet-status { color: $text-muted; }
    NodesPane > #fleet-status.-failed { color: $gate-failed; }
    NodesPane > #fleet-quorum { text-style: bold; }
    NodesPane > #fleet-quorum.-below { color: $gate-failed; }
    NodesPane > #fleet-header { color: $text-muted; text-style: bold; }
    NodesPane > FleetTable { margin: 0 0 0 1; }
    NodesPane.-missing > #fleet-quorum, NodesPane.-missing > #fleet-replicas,
    NodesPane.-missing > #fleet-header, NodesPane.-missing > FleetTable { display: none; }
    """

    BINDINGS = [
        Binding(
            "s",
            "cycle_sort",
            "Sort",
            id="nodes.sort",
            tooltip="Sort the nodes: worst first, by name, by step time",
        ),
        Binding(
            "up,k", "scroll(-1)", "Up", show=False, id="nodes.up", tooltip="Scroll the nodes up"
        ),
        Binding(
            "down,j",
            "scroll(1)",
            "Down",
            show=False,
            id="nodes.down",
            tooltip="Scroll the nodes down",
        ),
        Binding(
            "pageup",
            "page(-1)",
            "Page up",
            show=False,
            id="nodes.page_up",
            tooltip="Scroll a page up",
        ),
        Binding(
            "pagedown",
            "page(1)",
            "Page down",
            show=False,
            id="nodes.page_down",
            tooltip="Scroll a page down",
        ),
        Binding(
            "home", "edge(0)", "Top", show=False, id="nodes.top", tooltip="The worst node (the top)"
        ),
        Binding("end", "edge(1)", "Bottom", show=False, id="nodes.bottom", tooltip="The last node"),
    ]

    def __init__(self, run_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_id = run_id
        self.sort = SORTS[0]
        self.fleet: Fleet | None = None
        """The latest snapshot (kept while hidden: shown at once when the tab comes back)."""
        self.view: FleetView | None = None
        self.missing = False
        self.refresher: FleetRefresh | None = None
        self._error = ""
        self._texts: dict[str, str] = {}
        """What each line box shows (`_set`)."""
        self.showing = False
        """Whether the tab is on display (a node's alert then needs no toast: see
        `PipelineScreen.applied`)."""

    def compose(self) -> ComposeResult:
        self._status_box = Static("fetching the fleet …", id="fleet-status", markup=False)
        self._quorum = Static(id="fleet-quorum", markup=False)
        self._replicas = Static(id="fleet-replicas", markup=False)
        self._header = Static(id="fleet-header", markup=False)
        self._table = FleetTable(id="fleet-table")
        yield self._status_box
        yield self._quorum
        yield self._replicas
        yield self._header
        yield self._table

    def on_mount(self) -> None:
        session = shell(self).session
        caps = session.capabilities
        if caps is not None and not caps.has(CAPABILITY):
            self.fleet_missing("")
            return
        interval = fleet_refresh_s(caps.limits.fleet_refresh_s if caps is not None else None)
        self.refresher = FleetRefresh(
            shell(self).client, self.run_id, self, self, interval_s=interval
        )

    def on_show(self) -> None:
        self.showing = True
        if self.refresher is not None:
            self.refresher.show()

    def on_hide(self) -> None:
        self.showing = False
        if self.refresher is not None:
            self.refresher.hide()

    def on_unmount(self) -> None:
        self.on_hide()

    def observe(self, event: EventBase) -> None:
        """An event the run screen applied: a fleet event (`node.*`, `straggler.*`,
        `quorum.changed`: kind "fleet") asks for an earlier refresh."""
        if event.kind == "fleet" and self.refresher is not None:
            self.refresher.poke()

    # ------------------------------------------------------------ FleetSink

    def fleet_fetched(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self._error = ""
        self._draw()

    def fleet_failed(self, error: ItoError, retry_in_s: float) -> None:
        self._error = (
            f"not refreshed: {one_line(str(error), max_len=120)} · again in {duration(retry_in_s)}"
        )
        self._paint_status()

    def fleet_missing(self, detail: str) -> None:
        self.missing = True
        self.refresher = None
        self.add_class("-missing")
        self._status_box.update(MISSING_TEXT)

    # ------------------------------------------------------------ drawing

    def _draw(self) -> None:
        fleet = self.fleet
        if fleet is None or self.missing:
            return
        view = fleet_view(fleet, sort=self.sort)
        before = [row.hostname for row in self.view.nodes] if self.view is not None else []
        view = self.view = view._replace(nodes=steady(view.nodes, self.sort, before))
        width = max(20, self.content_region.width - 2)
        self._set(self._quorum, view.quorum)
        self._quorum.set_class(not view.quorum_ok, "-below")
        self._set(self._replicas, "\n".join(replica_lines(view.replicas, width)))
        self._set(self._header, "\n".join(header_lines(width)))
        self._table.show(view)
        self._paint_status()

    def _paint_status(self) -> None:
        fleet = self.fleet
        parts = [self.view.summary if self.view is not None else "no nodes yet"]
        parts.append(f"{SORT_WORDS.get(self.sort, self.sort)} (s sorts)")
        if fleet is not None:  # on the run's clock; a day that is not today's is named
            parts.append(f"as of {when(fleet.at, shell(self).session.clock())}")
        if self._error:
            parts.append(self._error)
        self._status_box.set_class(bool(self._error), "-failed")
        self._set(self._status_box, " · ".join(parts))

    def _set(self, box: Static, text: str) -> None:
        # Only when the words changed; and a layout (which repaints the whole pane, the
        # node rows too: bench 18.15's bytes per refresh) only when the line count did.
        key = box.id or ""
        old = self._texts.get(key)
        if old != text:
            self._texts[key] = text
            relayout = old is None or old.count("\n") != text.count("\n")
            box.update(Text(text), layout=relayout)

    def on_resize(self) -> None:
        self._draw()

    # ------------------------------------------------------------ keys

    def action_cycle_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.view = None  # a new order: the view's own, not the last one shown
        self._draw()

    def action_scroll(self, delta: int) -> None:
        self._table.scroll_relative(y=delta, animate=False)

    def action_page(self, delta: int) -> None:
        self._table.scroll_relative(y=delta * max(1, self._table.size.height - 1), animate=False)

    def action_edge(self, end: int) -> None:
        if end:
            self._table.scroll_end(animate=False)
        else:
            self._table.scroll_home(animate=False)
