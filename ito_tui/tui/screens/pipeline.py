"""The run screen: one run's stages and gates, telemetry, checkpoints, faults and events.

Driven by the run's resumable event stream, never by polling. The screen owns no run
data: the `state.RunTracker` does, and the screen hands each widget an immutable view
of it (`StageView`s, `Progress`, `ChartView`s) when the one repaint scheduler
(`tui/repaint.py`) says so. Its jobs are split: following the stream
(`tui/run_follow.py`), the proposals and their modal (`tui/run_proposals.py`), the
scheduler (`tui/repaint.py`), the keys (`tui/run_actions.py`, this screen's base),
lending the run to the app's watcher (`tui/run_lending.py`, its other base); here the
layout and the panels' paints.

One telemetry event, socket to screen (each layer once, in DESIGN.md's order):

1. `client/stream.py: EventStream.__anext__` — SSE decode (size caps), resume with
   `Last-Event-ID`, dedupe by seq; `contract/events.py: parse_event` types it.
2. `tui/run_follow.py: RunFollower.run` — `tracker.feed(event)`.
3. `state/tracker.py: RunTracker.feed` → `state/run.py: RunState.apply` (the reducers
   of `state/reducers.py`) and `state/bank.py: TelemetryBank.ingest`; returns
   `Changes(run=…, telemetry=True, …)`.
4. `tui/screens/pipeline.py: PipelineScreen.applied` — marks the panels those `Changes`
   name (`_mark`); no change detection here.
5. `tui/repaint.py: Repaints.mark` → `Repaints._flush` — coalesced, at most 10 Hz for
   charts and the run's progress, 2 Hz for tables, hidden tabs skipped until shown.
6. `tui/screens/pipeline.py: PipelineScreen._paint_charts` — `TelemetryPanel.wanted()`
   → `RunTracker.chart` (`state/views.py: chart_view`, pure) → `TelemetryPanel.show`
   → `tui/widgets/chart_stack.py: ChartStack.show` (refreshes only the rows whose view
   changed).
7. `tui/widgets/chart_stack.py: ChartStack.render_line` draws the views it was given.

The job log and the fleet have their own paths, beside this one: `tui/run_logs.py`
(`client/logstream.py` → `state/logbuffer.py` → `tui/widgets/log_view.py`) and
`tui/run_fleet.py` (`client.fleet` → `state/fleet.py: fleet_view` →
`tui/widgets/fleet_table.py`), each running only while its tab is shown.

A backfill after a resync: `RunTracker.feed(resync)` re-bases on the snapshot and
returns `EVERYTHING` (step 3; `applied` marks every panel), then
`RunFollower.backfill` → `client/api.py: ItoClient.telemetry` (one `GET /telemetry`
page) → `RunTracker.backfill(page.items, fresh=True)` (a fresh bank, the chart markers
kept) → `PipelineScreen.backfilled` marks the charts → steps 5–7.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from ito_tui.alerting.model import FLEET_ALERTS, alert_for
from ito_tui.state import RunState, RunTracker
from ito_tui.tui.alerts import terminal_title
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.messages import Reconnected, WorkerFailed
from ito_tui.tui.repaint import CHART_INTERVAL_S, TABLE_INTERVAL_S, Repaints
from ito_tui.tui.run_actions import RunActions
from ito_tui.tui.run_compare import RunCompare
from ito_tui.tui.run_ending import RunEnding
from ito_tui.tui.run_follow import RunFollower
from ito_tui.tui.run_lending import RunLending
from ito_tui.tui.run_projection import RunProjection
from ito_tui.tui.run_proposals import RunProposals
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.eventlog import EventLogView
from ito_tui.tui.widgets.gate_banner import GateBanner
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.logs_pane import LogsPane
from ito_tui.tui.widgets.nodes_pane import NodesPane
from ito_tui.tui.widgets.run_strip import RunStrip
from ito_tui.tui.widgets.run_summary import RunSummaryPanel
from ito_tui.tui.widgets.silence_banner import SilenceBanner
from ito_tui.tui.widgets.stage_detail import StageDetail
from ito_tui.tui.widgets.stages import StageList
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput
from ito_tui.tui.widgets.telemetry import TelemetryPanel
from ito_tui.tui.widgets.timeline import Timeline, fault_times

if TYPE_CHECKING:
    from ito_tui.client.errors import ItoError
    from ito_tui.contract import EventBase, Proposal, Run
    from ito_tui.state.changes import Changes
    from ito_tui.state.views import StageView

RUN_PANELS = ("strip", "stages", "detail")
"""The panels that show the run's step, ETA and spend: painted together, in one wake-up,
from one state, so they never disagree."""


class PipelineScreen(StyledOnFirstShow, RunActions, RunLending):
    """One run, live: the screen operators keep open for days."""

    CSS_PATH = "pipeline.tcss"

    def __init__(
        self, run_id: str, *, review_on_open: bool = True, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.run_id = run_id
        self.review_on_open = review_on_open
        self.tracker = RunTracker(run_id)
        """The one owner of this run's data (state, telemetry bank, event log)."""
        self.repaints = Repaints(self)
        """The one repaint scheduler of this screen's panels (`pending` while one waits)."""
        self.proposals = RunProposals(self, self.tracker, self.repaints)
        self.projection = RunProjection(self)  # painted with the strip, the stages and header
        self.compare = RunCompare(self, lambda: self._panel.extras, self._compared)
        self.ending = RunEnding(self)  # the summary panel, painted with the detail
        self.connection = "connecting"
        self.loaded = False
        self._last_event_ts: datetime | None = None
        self._selected: str | None = None
        self._follow_current = True
        """The stage detail follows the current stage until the operator picks another."""
        self._shown_unseen: frozenset[str] = frozenset()
        self._lent = False
        self._bindings_for: tuple[bool, bool] | None = None
        """(pending proposals, run over) as the footer last offered keys for."""
        self._cancel: CancelRunModal | None = None
        self._views: tuple[RunState | None, tuple[StageView, ...]] = (None, ())
        fast, slow = CHART_INTERVAL_S, TABLE_INTERVAL_S
        panel = self.repaints.panel
        for name_, paint in zip(
            RUN_PANELS, (self._paint_strip, self._paint_stages, self._paint_detail), strict=True
        ):
            # Under another screen (not a modal) nothing is painted; `shown` catches up.
            panel(name_, paint, interval=fast, visible=self._on_top)
        panel("charts", self._paint_charts, interval=fast, visible=self._on_tab("tab-telemetry"))
        panel("log", self._paint_log, interval=fast, visible=self._on_tab("tab-events"))
        panel("loss", self.proposals.paint_loss, interval=fast, visible=self.proposals.loss_shown)
        panel("timeline", self._paint_timeline, interval=slow, visible=self._on_tab("tab-timeline"))

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        session = shell(self).session
        # Kept: the paints reach each widget directly, never through a query per repaint.
        self._header = HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            demo=session.demo,
            title=self.run_id,
            id="header",
        )
        self._strip = RunStrip(id="run-strip")
        self._banner = GateBanner(id="gate-banner")
        live = lambda: self.connection.startswith("live")  # noqa: E731
        self._silence = SilenceBanner(self.run_id, live=live, id="silence-banner")
        self._proposal_strip = Static(id="proposal-strip", markup=False)
        self._stages = StageList(id="stages")
        self._detail = StageDetail(id="detail")
        self._summary = RunSummaryPanel(id="run-summary")
        self._panel = TelemetryPanel(id="telemetry")
        self._timeline = Timeline(id="timeline")
        self._log = EventLogView(id="eventlog")
        self._logs = LogsPane(self.run_id, id="logs")
        self._fleet = NodesPane(self.run_id, id="nodes")
        self._tabs = TabbedContent(id="tabs", initial="tab-telemetry")
        yield self._header
        yield self._strip
        yield self._banner
        yield self._silence
        yield self._proposal_strip
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield self._stages
                with VerticalScroll(id="detail-scroll"):
                    yield self._summary  # once the run has ended, above the stage detail
                    yield self._detail
            with self._tabs:
                with TabPane("Telemetry", id="tab-telemetry"):
                    yield self._panel
                with TabPane("Ckpts", id="tab-timeline"), VerticalScroll():
                    yield self._timeline
                with TabPane("Events", id="tab-events"):
                    yield Static(id="log-caption", markup=False)
                    yield SteadyInput(placeholder="search events (Enter)", id="log-search")
                    yield self._log
                with TabPane("Logs", id="tab-logs"):
                    yield self._logs
                with TabPane("Nodes", id="tab-nodes"):
                    yield self._fleet
        yield SteadyFooter()

    def on_mount(self) -> None:
        if (alerting := self._alerting()) is not None:
            # This screen follows the run: the app's watcher takes its events, not a
            # second stream of the same run (lent before this screen's stream opens).
            alerting.lend(self.run_id)
            self._lent = True
        self.query_one("#log-search").display = False
        self._log_caption()
        self.repaints.mark_all()
        self._follow()

    def on_unmount(self) -> None:
        self._give_back()

    def on_reconnected(self, event: Reconnected) -> None:
        """Connected again in place (ctrl+l): follow the run again, from a fresh snapshot
        (lent to this screen again if its stream had failed and given it back)."""
        if not self._lent and (alerting := self._alerting()) is not None:
            alerting.lend(self.run_id)
            self._lent = True
        self._follow()  # exclusive: a stream still open is closed first

    @property
    def run_state(self) -> RunState:
        return self.tracker.state

    def pending(self) -> list[Proposal]:
        """The run's pending proposals, oldest first."""
        return self.proposals.pending()

    def open_proposal(self, proposal_id: str | None = None) -> bool:
        """Open the modal for `proposal_id` (default: the oldest pending one)."""
        return self.proposals.open(proposal_id)

    # ------------------------------------------------------------ following (FollowSink)

    @work(exclusive=True, group="pipeline-stream", exit_on_error=False)
    async def _follow(self) -> None:
        """Snapshot, backfill, then follow the stream until the run's terminal event."""
        session = shell(self).session
        caps = session.capabilities
        retention = caps.limits.event_retention if caps is not None else None
        follower = RunFollower(shell(self).client, self.tracker, self, event_retention=retention)
        await follower.run()

    def seeded(self, run: Run, changes: Changes) -> None:
        self.loaded = True
        self._mark(changes)
        if self._lent and (alerting := self._alerting()) is not None:
            alerting.lent_snapshot(self.run_id, run)

    def proposals_fetched(self, proposals: list[Proposal]) -> None:
        self.proposals.add(proposals)
        self.repaints.mark("strip")
        if self.review_on_open and self.pending():
            # A run that waits for a person shows what it waits for when opened.
            self.open_proposal()

    def applied(self, event: EventBase, changes: Changes) -> None:
        """One event went through the tracker: mark what it changed, route its alert."""
        self._mark(changes)
        self.inspecting(event, changes)
        if not changes:
            return  # history (from before the snapshot) or a duplicate: no alert, no modal
        self._fleet.observe(event)  # a fleet event: the Nodes tab refreshes sooner
        # Stage times are on the backend's (simulated, in a demo) clock: compare like with like.
        self._last_event_ts = event.at
        after = self.run_state
        if self._lent and (alerting := self._alerting()) is not None:
            alerting.observe(self.run_id, event, after)
        # (A run's end changes the proposals too, clearing the pending set: only a
        # proposal's own event carries one to show.)
        opened = event.type.startswith("proposal.") and self.proposals.changed(event)
        alert = alert_for(event, after)
        alerter = self.alerter
        if alert is not None and alerter is not None:
            # A proposal's modal, opened just now, is its notice: a toast would cover it.
            # So is the Nodes tab on display, this screen on top, for a node's alert: its
            # row goes to the top, marked, as the toast would say (and the toast's coming
            # and going repainted the table's scrollbar three times, ~5 KB at each
            # straggler, bench 18.15). The bell, the title and the event log still say it.
            # The app's watcher may have sent this one already: the router sends it once.
            shown = alert.kind in FLEET_ALERTS and self.is_active and self._fleet.showing
            alerter.alert(alert, toast=not (opened or shown))

    def backfilled(self, changes: Changes) -> None:
        self._mark(changes)

    def backfill_failed(self, error: ItoError) -> None:
        self.post_message(WorkerFailed(error))

    def connection_changed(self, label: str) -> None:
        self.connection = label
        self.repaints.mark("strip")
        self._silence.check()  # a lost connection is the header's news, not silence

    def _mark(self, changes: Changes) -> None:
        """Mark the panels that show what `changes` says changed."""
        marks: list[str] = []
        if changes.run:
            marks += RUN_PANELS
        if changes.log:
            marks.append("log")
        if changes.telemetry:
            marks += ("charts", "loss")
        if changes.timeline:
            marks.append("timeline")
        if changes.proposals:
            marks.append("strip")
        if marks:
            self.repaints.mark(*marks)

    def on_screen_resume(self) -> None:
        # Back from a modal: the toasts it held show now; the terminal title is this run's.
        if self.alerter is not None:
            self.alerter.release()
        self.repaints.mark("strip", "log")
        self.repaints.shown()
        self._silence.check()

    # ------------------------------------------------------------ paints

    def _on_tab(self, tab: str) -> Callable[[], bool]:
        return lambda: self._tabs.active == tab and self._on_top()

    def _paint_strip(self) -> None:
        s, progress = self.run_state, self.tracker.progress()
        self._header.connection = self.connection
        self.projection.paint()
        self._strip.run = s
        self._strip.progress = progress
        strip = self._proposal_strip
        text = self.proposals.strip_text()
        offered = (text is not None, s.terminal)
        if offered != self._bindings_for:
            # "Review proposal" comes and goes with pending ones; "Cancel run" goes at the end.
            self._bindings_for = offered
            self.refresh_bindings()
        strip.display = text is not None
        if text is not None:
            strip.update(text)
        cancel = self._cancel
        if cancel is not None and cancel.is_attached:
            # The modal's "Spent so far" follows the run while the operator reads it.
            cancel.progress = progress
            cancel.spend = s.spend
        alerter = self.alerter
        if alerter is not None and self.loaded and self._on_top():
            alerter.set_title(terminal_title(s), self.run_id)

    def _paint_stages(self) -> None:
        s = self.run_state
        stages = self._stages
        stages.now = self._last_event_ts
        stages.current = s.current_stage
        stages.views = self._stage_views()
        if self._follow_current and s.current_stage:
            stages.follow(s.current_stage)
        failed = next((g for g in s.gates.values() if str(g.status) == "failed"), None)
        if self._banner.gate is not failed:
            self._banner.gate = failed

    def _paint_detail(self) -> None:
        s = self.run_state
        # Following the current stage, the detail moves with it in this same paint (the
        # list's selection message comes after).
        current = s.current_stage if self._follow_current else None
        name = current or self._selected or s.current_stage or "data_prep"
        detail = self._detail
        detail.summaries = {
            "manifest": s.manifest,
            "dedup": s.dedup,
            "decontam": s.decontam,
            "ladder": s.ladder,
        }
        detail.plan = s.plan
        detail.view = next((v for v in self._stage_views() if v.name == name), None)
        self.ending.paint()

    def _stage_views(self) -> tuple[StageView, ...]:
        """`tracker.stages()` of the current state, once per state (list and detail)."""
        state = self.run_state
        if self._views[0] is not state:
            self._views = (state, self.tracker.stages())
        return self._views[1]

    def _paint_charts(self) -> None:
        panel, tracker = self._panel, self.tracker
        panel.stage = tracker.state.current_stage
        window = panel.window_s
        ref, by = self.compare.reference, self.compare.by
        views = {key: tracker.chart(key, width, window, ref, by) for key, width in panel.wanted()}
        panel.show(views, rewinds=tracker.rewinds)

    def _paint_log(self) -> None:
        log = self._log
        entries = self.tracker.log.filter(kind=log.kind, query=log.search or None)
        log.now = shell(self).session.clock()
        log.entries = tuple(self.proposals.mark_unseen(entries))

    def _paint_timeline(self) -> None:
        s, timeline = self.run_state, self._timeline
        timeline.now = shell(self).session.clock()
        if timeline.checkpoints is not s.checkpoints:
            timeline.checkpoints = s.checkpoints
        if timeline.faults is not s.faults or timeline.incidents is not s.node_events:
            timeline.set_faults(s.faults, s.node_events, fault_times(s, self.tracker.log))

    def _on_top(self) -> bool:
        """Whether this screen is what the operator sees (alone or under a modal)."""
        stack = self.app.screen_stack
        return stack[-1] is self or (len(stack) > 1 and stack[-1].is_modal and stack[-2] is self)
