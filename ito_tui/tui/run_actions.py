"""The run screen's keys and what they do: proposals, the window, the log, tabs, cancel.

`RunActions` is the run screen's base (`PipelineScreen`): the bindings, `check_action`
(the footer offers only what can be done: no *Cancel run* once the run is over) and the
actions. It reads the screen's tracker and widgets and marks its repaints; it paints
nothing itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent

from ito_tui.tui.messages import OpenLogsAt
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.eventlog import FILTERS, EventLogView
from ito_tui.tui.widgets.stages import StageList
from ito_tui.tui.widgets.telemetry import TelemetryPanel

if TYPE_CHECKING:
    from textual.widget import Widget

    from ito_tui.contract import EventBase, Proposal
    from ito_tui.state import RunState, RunTracker
    from ito_tui.state.changes import Changes
    from ito_tui.state.inspect_points import Reference
    from ito_tui.tui.repaint import Repaints
    from ito_tui.tui.run_compare import RunCompare
    from ito_tui.tui.screens.inspector import InspectorScreen
    from ito_tui.tui.widgets.logs_pane import LogsPane
    from ito_tui.tui.widgets.nodes_pane import NodesPane
    from ito_tui.tui.widgets.run_summary import RunSummaryPanel
    from ito_tui.tui.widgets.stage_detail import StageDetail
    from ito_tui.tui.widgets.timeline import Timeline

__all__ = ["RunActions", "binding"]


def binding(
    key: str, action: str, description: str, tooltip: str, *, name: str = "", **kw: Any
) -> Binding:
    """A binding whose keymap id is `pipeline.<name or action>` (an id a settings file can
    write unquoted: `tab('tab-events')` would not do)."""
    return Binding(key, action, description, id=f"pipeline.{name or action}", tooltip=tooltip, **kw)


class RunActions(Screen[None]):
    """The bindings and actions of the run screen (`PipelineScreen` builds the rest)."""

    BINDINGS = [
        binding("p", "review_proposal", "Review proposal", "Review the pending proposal"),
        binding("w", "cycle_window", "Window", "Cycle the telemetry window: 15 min, 6 h, run"),
        binding("m", "pick_metric", "Metrics", "Chart any metric the run sends (type to filter)"),
        binding(
            "i",
            "inspect",
            "Inspect",
            "Open the highlighted chart full-screen (loss unless another is picked)",
            show=False,
        ),
        binding(
            "c",
            "compare",
            "Compare",
            "Draw another run on these charts, by tokens seen (type to filter; none clears)",
            show=False,  # F1 and the palette list it; the footer at 80 columns is full
        ),
        binding(
            "v",
            "spec_diff",
            "Spec diff",
            "This run's spec, plan and estimate beside the reference run's",
        ),
        binding("f", "cycle_filter", "Filter", "Cycle the event log filter by kind"),
        binding("slash", "search", "Search", "Search the event log"),
        binding(
            "1",
            "tab('tab-telemetry')",
            "Telemetry",
            "Show telemetry",
            name="tab_telemetry",
            show=False,
        ),
        binding(
            "2",
            "tab('tab-timeline')",
            "Ckpts",
            "Show checkpoints and faults",
            name="tab_timeline",
            show=False,
        ),
        binding(
            "3", "tab('tab-events')", "Events", "Show the event log", name="tab_events", show=False
        ),
        binding("4", "tab('tab-logs')", "Logs", "Show the job log", name="tab_logs", show=False),
        binding(
            "5", "tab('tab-nodes')", "Nodes", "Show the fleet's nodes", name="tab_nodes", show=False
        ),
        binding("x", "cancel_run", "Cancel run", "Cancel this run (asks first)"),
        binding(
            "n",
            "new_run",
            "New run",
            "A new run from this run's spec: the form opens filled (nothing is sent before its "
            "confirm)",
        ),
        binding("escape", "back", "Back", "Back to the previous screen"),
    ]

    # What the screen provides (set in its `__init__` and `compose`).
    run_id: str
    tracker: RunTracker
    repaints: Repaints
    _panel: TelemetryPanel
    _tabs: TabbedContent
    _log: EventLogView
    _timeline: Timeline
    _logs: LogsPane
    _fleet: NodesPane
    _stages: StageList
    _summary: RunSummaryPanel
    _detail: StageDetail
    compare: RunCompare
    _cancel: CancelRunModal | None
    _selected: str | None
    _follow_current: bool
    inspector: InspectorScreen | None = None
    """The chart inspector opened from this screen, while it is open (`inspecting`)."""

    @property
    def run_state(self) -> RunState:
        return self.tracker.state

    @property
    def reference(self) -> Reference | None:
        """The reference run drawn on the charts (None: none, or not fetched yet)."""
        return self.compare.reference

    def pending(self) -> list[Proposal]:
        raise NotImplementedError

    def open_proposal(self, proposal_id: str | None = None) -> bool:
        raise NotImplementedError

    @on(TelemetryPanel.Changed)
    def _charts_changed(self) -> None:
        # The window, the stage or a chart's width changed: the views are computed again.
        self.repaints.mark("charts")
        self.compare.wants(self._panel.extras)  # an open metric charted: the reference's too

    @on(ChartStack.Open)
    def _open_chart(self, event: ChartStack.Open) -> None:
        # Enter or a click on a chart (a fixed one or an open metric): full-screen.
        from ito_tui.tui.screens.inspector import InspectorScreen  # pushed on demand only

        self.inspector = InspectorScreen(
            self.run_id, event.key, tracker=self.tracker, reference=self.reference
        )
        self.app.push_screen(self.inspector)

    def action_inspect(self) -> None:
        # One key from any tab to the inspector: four Tabs reach the charts otherwise.
        self.action_tab("tab-telemetry")
        charts = self._panel.query_one(ChartStack)
        charts.focus()  # back from the inspector, up/down pick another chart
        charts.action_open()

    def inspecting(self, event: EventBase, changes: Changes) -> None:
        """Hand a live event that changed the telemetry to the open inspector."""
        inspector = self.inspector
        if inspector is None or not changes.telemetry:
            return
        if inspector.is_attached:
            inspector.observe(event)
        else:
            self.inspector = None  # closed: let it go

    @on(StageList.StageSelected)
    def _stage_selected(self, event: StageList.StageSelected) -> None:
        self._selected = event.name
        self._follow_current = event.name == self.run_state.current_stage
        self.repaints.mark("detail")
        if self._summary.display:
            # A run's summary sits above the stage detail: show the stage picked (and the
            # summary again for the current one), even where the column is short.
            scroll = self.query_one("#detail-scroll")
            scroll.scroll_to_widget(self._summary if self._follow_current else self._detail)

    @on(OpenLogsAt)
    def _open_logs_at(self, message: OpenLogsAt) -> None:
        # Enter on a fault or a gate result (timeline, event log): its lines in the Logs tab.
        self.action_tab("tab-logs")
        self._logs.show_around(message.when, message.label)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self) -> None:
        # Hidden panels skipped their repaints; catch up now that one is shown.
        self.repaints.shown()
        # The job log's lines and the fleet's rows want the width: below 160 columns the
        # stage list gives way to them (the header and the run strip still say where the
        # run is; pipeline.tcss); 1, 2 or 3 bring it back.
        self.set_class(self._tabs.active in ("tab-logs", "tab-nodes"), "-wide-tab")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self.run_state
        if action == "review_proposal":
            return bool(self.pending())
        if action == "cancel_run":
            return not (s.terminal or shell(self).session.read_only)
        if action == "back":
            return len(self.app.screen_stack) > 1
        if action == "new_run":
            # In the footer once the run has ended, where Cancel run was.
            return s.terminal and s.spec is not None and not shell(self).session.read_only
        if action == "spec_diff":
            return self.compare.run_id is not None
        return True

    def action_review_proposal(self) -> None:
        self.open_proposal()

    def action_cycle_window(self) -> None:
        self._panel.cycle_window()

    def action_pick_metric(self) -> None:
        from ito_tui.tui.screens.metric_picker import MetricPicker, MetricRow, metric_rows

        bank, panel = self.tracker.bank, self._panel

        def rows() -> tuple[tuple[MetricRow, ...], int]:  # again each second while open
            return metric_rows(bank, panel.extras), bank.refused_names

        picker = MetricPicker(*rows(), newer=rows)

        def picked(name: str | None) -> None:
            if name is not None:
                panel.toggle_extra(name)
                self.action_tab("tab-telemetry")

        self.app.push_screen(picker, picked)

    def action_compare(self) -> None:
        from ito_tui.tui.screens.run_picker import RunChoice, RunPicker

        def picked(choice: RunChoice | None) -> None:
            if choice is not None:  # None: closed without a change
                self.compare.choose(choice.run_id)
                self.refresh_bindings()  # the spec diff comes and goes with a reference
                self.action_tab("tab-telemetry")

        self.app.push_screen(RunPicker(self.run_id, self.compare.run_id), picked)

    def _compared(self) -> None:
        # A reference came, went, or its fetch failed: the legend and the charts follow.
        self._panel.set_legend(self.compare.legend())
        self.repaints.mark("charts")

    def action_spec_diff(self) -> None:
        from ito_tui.tui.screens.spec_diff import SpecDiffScreen

        if (other := self.compare.run_id) is not None:
            self.app.push_screen(SpecDiffScreen(self.run_id, other))

    def action_tab(self, tab: str) -> None:
        self._tabs.active = tab
        # The Events, Logs and Nodes tabs are for their lines (up/down, Enter opens one):
        # each takes the keys, which took three Tabs to reach; on the other tabs the stage
        # list has them again.
        takers: dict[str, Widget] = {
            "tab-timeline": self._timeline,
            "tab-events": self._log,
            "tab-logs": self._logs,
            "tab-nodes": self._fleet,
        }
        if (taker := takers.get(tab)) is not None:
            taker.focus()
        elif self.focused is not None and self.focused in takers.values():
            self._stages.focus()

    def action_cycle_filter(self) -> None:
        log = self._log
        log.kind = FILTERS[(FILTERS.index(log.kind) + 1) % len(FILTERS)]
        self._log_caption()
        self.repaints.mark("log")
        self.action_tab("tab-events")

    def action_search(self) -> None:
        self.action_tab("tab-events")
        search = self.query_one("#log-search", Input)
        search.display = True
        search.focus()

    @on(Input.Submitted, "#log-search")
    def _search(self, event: Input.Submitted) -> None:
        self._log.search = event.value.strip()
        event.input.display = bool(event.value.strip())
        self._log_caption()
        self.repaints.mark("log")
        self._log.focus()

    def _log_caption(self) -> None:
        # Times first: a narrow pane cuts the end, and the footer shows the keys too.
        self.query_one("#log-caption", Static).update(
            f"times UTC · filter: {self._log.filter_label} (f cycles, / searches)"
        )

    @on(EventLogView.LineOpened)
    def _line_opened(self, event: EventLogView.LineOpened) -> None:
        from ito_tui.tui.screens.event_line import EventLineScreen  # pushed on demand only

        self.app.push_screen(EventLineScreen(event.entry))

    def action_new_run(self) -> None:
        from ito_tui.tui.new_run import new_run_from

        if self.check_action("new_run", ()):
            new_run_from(self, self.run_id, self.run_state.spec)

    def action_cancel_run(self) -> None:
        if self.check_action("cancel_run", ()):
            s = self.run_state
            self._cancel = CancelRunModal(self.run_id, s.spend, progress=self.tracker.progress())
            self.app.push_screen(self._cancel)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
