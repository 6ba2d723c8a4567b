"""The pipeline screen of one run: stages and gates, telemetry, checkpoints, faults, events.

Driven by the run's resumable event stream, never by polling: on open it fetches the
snapshot and a telemetry backfill, then follows `client.events(run_id, since_seq=…)`.
Each event updates the state at once, but the screen repaints on a capped one-shot
timer (charts ≤ 10 Hz, tables ≤ 2 Hz) that is armed only when something changed, so
bursts coalesce and an idle run costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from ito_tui.alerting.model import alert_for
from ito_tui.client.errors import (
    AuthError,
    BackendUnavailable,
    ItoError,
    TransportPolicyError,
)
from ito_tui.contract import EventBase, Proposal, Run
from ito_tui.state import RunState, RunTracker, TelemetryBank
from ito_tui.tui.alerts import terminal_title
from ito_tui.tui.compositor import RowCropCompositor
from ito_tui.tui.errors import WorkerFailed, forward_failure
from ito_tui.tui.needs_you import AppAlerts, NeedsYouChanged
from ito_tui.tui.repaint import CHART_INTERVAL_S, TABLE_INTERVAL_S, Repaints
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.eventlog import FILTERS, EventLogView
from ito_tui.tui.widgets.gate_banner import GateBanner
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.run_strip import RunStrip
from ito_tui.tui.widgets.runfmt import safe
from ito_tui.tui.widgets.stage_detail import StageDetail
from ito_tui.tui.widgets.stages import StageList
from ito_tui.tui.widgets.telemetry import TelemetryCharts, TelemetryPanel
from ito_tui.tui.widgets.timeline import Timeline

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState
    from ito_tui.tui.alerts import Alerter

BACKFILL_POINTS = 2000
"""Telemetry points fetched on open and after a resync (the series bucket them anyway)."""
HISTORY_EVENTS = 5000
"""Events before the snapshot replayed on open, for the event log's history (at most half
the server's retention, which would otherwise answer with a resync)."""


def binding(
    key: str, action: str, description: str, tooltip: str, *, name: str = "", **kw: Any
) -> Binding:
    """A binding whose keymap id is `pipeline.<name or action>` (an id a settings file can
    write unquoted: `tab('tab-events')` would not do)."""
    return Binding(key, action, description, id=f"pipeline.{name or action}", tooltip=tooltip, **kw)


class PipelineScreen(Screen[None]):
    """One run, live: the screen operators keep open for days."""

    CSS_PATH = "pipeline.tcss"

    BINDINGS = [
        binding("p", "review_proposal", "Review proposal", "Review the pending proposal"),
        binding("w", "cycle_window", "Window", "Cycle the telemetry window: 15 min, 6 h, run"),
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
        binding("x", "cancel_run", "Cancel run", "Cancel this run (asks first)"),
        binding("escape", "back", "Back", "Back to the previous screen"),
    ]

    def __init__(
        self, run_id: str, *, review_on_open: bool = True, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.run_id = run_id
        self.review_on_open = review_on_open
        self.tracker = RunTracker(run_id)
        self.charts = TelemetryCharts(self.tracker.bank)
        self.connection = "connecting"
        self.loaded = False
        self.repaints = Repaints(self)
        """The one repaint scheduler of this screen's panels (`pending` while one waits)."""
        fast, slow = CHART_INTERVAL_S, TABLE_INTERVAL_S
        self.repaints.panel("strip", self._paint_strip, interval=fast)
        self.repaints.panel("stages", self._paint_stages, interval=fast)
        self.repaints.panel(
            "charts", self._paint_charts, interval=fast, visible=self._on_tab("tab-telemetry")
        )
        self.repaints.panel(
            "log", self._paint_log, interval=fast, visible=self._on_tab("tab-events")
        )
        self.repaints.panel("detail", self._paint_detail, interval=slow)
        self.repaints.panel(
            "timeline", self._paint_timeline, interval=slow, visible=self._on_tab("tab-timeline")
        )
        # Repaints touch a few rows at a time: render only widgets on those rows.
        self._compositor = RowCropCompositor()
        self._last_event_ts: datetime | None = None
        self._selected: str | None = None
        self._follow_current = True
        """The stage detail follows the current stage until the operator picks another."""
        self._fetched: dict[str, Proposal] = {}
        self._shown_unseen: frozenset[str] = frozenset()
        self._lent = False
        """Whether the app's watcher takes this run's events from this screen."""

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            demo=session.demo,
            title=self.run_id,
            id="header",
        )
        yield RunStrip(id="run-strip")
        yield GateBanner(id="gate-banner")
        yield Static(id="proposal-strip", markup=False)
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield StageList(id="stages")
                with VerticalScroll(id="detail-scroll"):
                    yield StageDetail(id="detail")
            with TabbedContent(id="tabs", initial="tab-telemetry"):
                with TabPane("Telemetry", id="tab-telemetry"):
                    yield TelemetryPanel(self.charts, id="telemetry")
                with TabPane("Ckpts & faults", id="tab-timeline"), VerticalScroll():
                    yield Timeline(id="timeline")
                with TabPane("Events", id="tab-events"):
                    yield Static(id="log-caption", markup=False)
                    yield Input(placeholder="search events (Enter)", id="log-search")
                    yield EventLogView(self._log_entries, id="eventlog")
        yield Footer()

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

    def _give_back(self) -> None:
        alerting = self._alerting()
        if self._lent and alerting is not None:
            alerting.give_back(self.run_id)
        self._lent = False

    def _alerting(self) -> AppAlerts | None:
        return getattr(self.app, "alerting", None)

    @property
    def alerter(self) -> Alerter | None:
        """The app's alert router (every run's alerts go through it, once each)."""
        return getattr(self.app, "alerter", None)

    @property
    def run_state(self) -> RunState:
        return self.tracker.state

    def _log_entries(self, kind: str | None, query: str | None) -> list[Any]:
        entries = self.tracker.log.filter(kind=kind, query=query)
        unseen = self._unseen()
        if not unseen:
            return entries
        # An expiry nobody here looked at says so, as the runs list does.
        return [
            e._replace(text=f"{e.text} unseen")
            if e.type == "proposal.expired" and any(f"proposal {pid} " in e.text for pid in unseen)
            else e
            for e in entries
        ]

    def _unseen(self) -> frozenset[str]:
        """This run's proposals that expired while nobody had them open (the app knows)."""
        needs_you = getattr(self.app, "needs_you", None)
        if needs_you is None:
            return frozenset()
        missed = needs_you.missed_for(self.run_id)
        return frozenset(m.proposal_id for m in missed if m.outcome == "expired" and not m.seen)

    def on_needs_you_changed(self, event: NeedsYouChanged) -> None:
        """The app's watcher saw a proposal of this run missed: the log says so."""
        unseen = self._unseen()
        if unseen != self._shown_unseen:
            self._shown_unseen = unseen
            self._mark("log")

    # ------------------------------------------------------------ the stream

    @work(exclusive=True, group="pipeline-stream", exit_on_error=False)
    async def _follow(self) -> None:
        """Snapshot, backfill, then follow the stream until the run's terminal event."""
        client = shell(self).client
        run = await client.run(self.run_id)
        self._seed(run)
        if self._lent and (alerting := self._alerting()) is not None:
            alerting.lent_snapshot(self.run_id, run)
        if run.pending_proposal_ids:
            # A snapshot names pending proposals by id only; fetch them to show them.
            for proposal in await client.proposals(self.run_id, status="pending"):
                self._fetched[proposal.proposal_id] = proposal
            self._mark("strip")
            if self.review_on_open and self.pending():
                # A run that waits for a person shows what it waits for when opened.
                self.open_proposal()
        await self._backfill()
        # From before the snapshot: the events up to it fill the log (`RunTracker.feed`).
        stream = client.events(
            self.run_id, since_seq=self._history_from(run), on_state=self._on_connection
        )
        try:
            async for event in stream:
                self._on_event(event)
                if event.type == "resync":
                    await self._backfill()
        finally:
            await stream.aclose()
        # The stream ends at the run's end: a terminal event, or a snapshot saying so.
        outcome = self.run_state.outcome
        self.connection = f"closed · run {outcome.replace('_', ' ')}" if outcome else "closed"
        self._mark("strip")

    async def _backfill(self) -> None:
        try:
            page = await shell(self).client.telemetry(self.run_id, max_points=BACKFILL_POINTS)
        except (AuthError, BackendUnavailable, TransportPolicyError):
            raise  # the session's problem, not the endpoint's: the app's error sink decides
        except ItoError as exc:
            # A malformed or refused telemetry page costs the charts their history, not the
            # live view: report it (endpoint and field or problem) and keep following.
            self.post_message(WorkerFailed(exc))
            return
        # A fresh bank: after a resync the old history may have gaps or overlaps.
        self.tracker.bank = TelemetryBank()
        self.charts.bank = self.tracker.bank
        self.charts.ingest_backfill(page.items)
        self._mark("charts")

    def _history_from(self, run: Run) -> int:
        caps = shell(self).session.capabilities
        history = HISTORY_EVENTS
        if caps is not None:
            history = min(history, caps.limits.event_retention // 2)
        return max(0, run.last_event_seq - history)

    def _seed(self, run: Run) -> None:
        self.tracker.seed(run)
        self.loaded = True
        if self.run_state.plan is not None:
            self.charts.hbm_gib = self.run_state.plan.hbm_per_gpu_gib
            self.charts.fp8 = "8" in str(self.run_state.plan.precision)
        self.repaints.mark_all()

    def _on_connection(self, state: ConnectionState) -> None:
        status = state.status
        if status == "reconnecting" and state.retry_in_s is not None:
            # One label, replaced: a flapping stream shows its count, never a line per reconnect.
            count = f" · {state.reconnects} reconnects" if state.reconnects > 1 else ""
            self.connection = f"reconnecting in {state.retry_in_s:.0f} s{count}"
        elif status == "resynced":
            self.connection = "live (resynced)"
        else:
            self.connection = status
        self._mark("strip")

    def _on_event(self, event: EventBase) -> None:
        """Apply one event now; the repaint it needs is coalesced."""
        before = self.run_state
        logged = self.tracker.log.appended
        if event.type == "resync" and event.seq <= before.last_seq:
            # The stream re-read a snapshot behind what it had shown (the backend's history
            # went backwards) or the run's end: re-base on it, numbering included.
            self.tracker.rebase(getattr(event, "data"))  # noqa: B009 - dynamic event class
            self.repaints.mark_all()
            return
        if not self.tracker.feed(event):
            # History (from before the snapshot) or a duplicate: the state is unchanged;
            # history may have added a log line.
            if self.tracker.log.appended != logged:
                self._mark("log")
            return
        after = self.run_state
        # Stage times are on the backend's (simulated, in a demo) clock: compare like with like.
        self._last_event_ts = event.sim_ts or event.ts
        self._mark("log", "strip", "stages")
        if event.type == "telemetry":
            self._mark("charts")
        else:
            self._mark("detail", "timeline")
        if after.plan is not None and before.plan is None:
            self.charts.hbm_gib = after.plan.hbm_per_gpu_gib
            self.charts.fp8 = "8" in str(after.plan.precision)
        if self._lent and (alerting := self._alerting()) is not None:
            alerting.observe(self.run_id, event, after)
        opened = event.type.startswith("proposal.") and self._proposal_changed(event)
        alert = alert_for(event, after)
        alerter = self.alerter
        if alert is not None and alerter is not None:
            # A proposal's modal, opened just now, is its notice: a toast would cover it.
            # The app's watcher may have sent this one already: the router sends it once.
            alerter.alert(alert, toast=not opened)

    def on_screen_resume(self) -> None:
        # Back from a modal (the proposal's): the toasts it held can show now, and the
        # terminal title is this run's once more.
        if self.alerter is not None:
            self.alerter.release()
        self._mark("strip", "log")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Say in the header that following stopped; the app's error sink tells why."""
        if event.worker.group != "pipeline-stream" or event.state != WorkerState.ERROR:
            return
        self.connection = f"offline: {safe(str(event.worker.error))}"
        self._mark("strip")
        self._give_back()  # not followed here any more: the app's watcher follows it
        forward_failure(self, event)

    # ------------------------------------------------------------ proposals

    def pending(self) -> list[Proposal]:
        """The run's pending proposals, oldest first (from events or fetched on open)."""
        s = self.run_state
        found = (s.proposals.get(pid) or self._fetched.get(pid) for pid in s.pending_proposals)
        return [p for p in found if p is not None]

    def _proposal_changed(self, event: EventBase) -> bool:
        """Show a proposal's change; True if its modal was opened for it now."""
        proposal = getattr(event, "data").proposal  # noqa: B009 - dynamic event class
        top = self.app.screen
        if isinstance(top, ProposalModal) and top.shows(proposal.proposal_id):
            top.proposal = proposal
            return False
        if event.type == "proposal.created" and str(proposal.status) == "pending":
            return self.open_proposal(proposal.proposal_id)
        return False

    def open_proposal(self, proposal_id: str | None = None) -> bool:
        """Open the modal for `proposal_id` (default: the oldest pending one); True if
        it was opened (not when there is none, or another proposal's is open)."""
        proposal = next(
            (p for p in self.pending() if proposal_id in (None, p.proposal_id)),
            self.run_state.proposals.get(proposal_id or ""),
        )
        if proposal is None:
            self.notify("No pending proposal for this run.", markup=False)
            return False
        if isinstance(self.app.screen, ProposalModal):
            return False  # one decision at a time; the strip keeps showing the others
        session = shell(self).session
        self.app.push_screen(
            ProposalModal(
                proposal,
                read_only=session.read_only,
                operator=session.operator,
                loss_source=lambda width: self.charts.chart("loss", width, 900.0),
            )
        )
        return True

    # ------------------------------------------------------------ coalesced repaint

    def _mark(self, *parts: str) -> None:
        self.repaints.mark(*parts)

    def _paint_stages(self) -> None:
        s = self.run_state
        stages = self.query_one(StageList)
        stages.now = self._last_event_ts
        stages.current = s.current_stage
        if stages.stages is not s.stages:
            stages.stages = s.stages
        if self._follow_current and s.current_stage:
            stages.select(s.current_stage)
        failed = next((g for g in s.gates.values() if str(g.status) == "failed"), None)
        banner = self.query_one(GateBanner)
        if banner.gate is not failed:
            banner.gate = failed

    def _paint_charts(self) -> None:
        s = self.run_state
        panel = self.query_one(TelemetryPanel)
        if s.telemetry is not None and s.telemetry.rl is not None:
            self.charts.staleness_bound = s.telemetry.rl.staleness_bound
        panel.stage = s.current_stage
        panel.version += 1

    def _paint_log(self) -> None:
        self.query_one(EventLogView).version += 1

    def _paint_detail(self) -> None:
        s = self.run_state
        name = self._selected or s.current_stage or "data_prep"
        detail = self.query_one(StageDetail)
        detail.summaries = {
            "manifest": s.manifest,
            "dedup": s.dedup,
            "decontam": s.decontam,
            "ladder": s.ladder,
        }
        detail.plan = s.plan
        detail.stage = s.stage(name)

    def _paint_timeline(self) -> None:
        s = self.run_state
        timeline = self.query_one(Timeline)
        timeline.checkpoints = s.checkpoints
        timeline.faults = s.faults

    def _on_tab(self, tab: str) -> Callable[[], bool]:
        return lambda: self.query_one(TabbedContent).active == tab

    def _paint_strip(self) -> None:
        s = self.run_state
        header = self.query_one(HeaderStrip)
        header.connection = self.connection
        self.query_one(RunStrip).run = s
        strip = self.query_one("#proposal-strip", Static)
        pending = self.pending()
        if strip.display != bool(pending):
            self.refresh_bindings()  # "Review proposal" comes and goes with pending ones
        strip.display = bool(pending)
        if pending:
            ids = ", ".join(safe(p.proposal_id) for p in pending)
            strip.update(Text(f"⚠ NEEDS APPROVAL: {ids} waiting for a decision — press p"))
        alerter = self.alerter
        if alerter is not None and self.loaded and self._on_top():
            alerter.set_title(terminal_title(s), self.run_id)

    def _on_top(self) -> bool:
        """Whether this screen is what the operator sees (alone or under a modal)."""
        stack = self.app.screen_stack
        return stack[-1] is self or (len(stack) > 1 and stack[-1].is_modal and stack[-2] is self)

    # ------------------------------------------------------------ interaction

    @on(StageList.StageSelected)
    def _stage_selected(self, event: StageList.StageSelected) -> None:
        self._selected = event.name
        self._follow_current = event.name == self.run_state.current_stage
        self._mark("detail")

    @on(TabbedContent.TabActivated)
    def _tab_activated(self) -> None:
        # Hidden panels skipped their repaints; catch up now that one is shown.
        self.repaints.shown()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self.run_state
        if action == "review_proposal":
            return bool(self.pending())
        if action == "cancel_run":
            return not (s.terminal or shell(self).session.read_only)
        if action == "back":
            return len(self.app.screen_stack) > 1
        return True

    def action_review_proposal(self) -> None:
        self.open_proposal()

    def action_cycle_window(self) -> None:
        self.query_one(TelemetryPanel).cycle_window()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_cycle_filter(self) -> None:
        log = self.query_one(EventLogView)
        log.kind = FILTERS[(FILTERS.index(log.kind) + 1) % len(FILTERS)]
        self._log_caption()
        self.action_tab("tab-events")

    def action_search(self) -> None:
        self.action_tab("tab-events")
        search = self.query_one("#log-search", Input)
        search.display = True
        search.focus()

    @on(Input.Submitted, "#log-search")
    def _search(self, event: Input.Submitted) -> None:
        self.query_one(EventLogView).search = event.value.strip()
        event.input.display = bool(event.value.strip())
        self._log_caption()
        self.query_one(EventLogView).focus()

    def _log_caption(self) -> None:
        log = self.query_one(EventLogView)
        # Times first: a narrow pane cuts the end, and the footer shows the keys too.
        self.query_one("#log-caption", Static).update(
            Text(f"times UTC · filter: {log.filter_label} (f cycles, / searches)")
        )

    def action_cancel_run(self) -> None:
        if self.check_action("cancel_run", ()):
            self.app.push_screen(
                CancelRunModal(self.run_id, self.run_state.spend, spent=self.run_state.usd_spent)
            )

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
