"""App-wide alerting: the one `RunsWatcher`, the sent-alert ledger, the command hook and
the "needs you" counter in every screen's header.

`AppAlerts` is created with the app and started once it is connected (again after a
reconnect). The watcher follows every active run on the backend (or `[alerts] runs`)
and hands its alerts to the app's `Alerter`, which sends each one once, on every
screen. What waits for a person (`NeedsYou`) shows in each `HeaderStrip` as
`⚠ 2 need you · 2m41s`, counted down once a second only while something is pending,
and is posted to the screen on top as `NeedsYouChanged` (the runs list marks its rows).
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from ito_tui.alerting.needs import NeedsYou
from ito_tui.tui.alerts import Alerter
from ito_tui.tui.errors import describe_failure
from ito_tui.tui.messages import NeedsYouChanged, WorkerFailed
from ito_tui.tui.navigation import run_screen, shown_run
from ito_tui.tui.widgets.header import HeaderStrip

if TYPE_CHECKING:
    from datetime import datetime

    from textual.app import App
    from textual.screen import Screen
    from textual.timer import Timer
    from textual.worker import Worker

    from ito_tui.alerting.hook import CommandHook
    from ito_tui.alerting.ledger import SentLedger
    from ito_tui.alerting.model import Alert
    from ito_tui.alerting.watcher import RunsWatcher
    from ito_tui.config import Settings
    from ito_tui.contract import EventBase, Run
    from ito_tui.state import RunState
    from ito_tui.tui.session import Session

log = logging.getLogger(__name__)

NOTHING = NeedsYou()
TICK_S = 1.0
"""How often the nearest expiry is counted down while a proposal is pending."""
POLL_S = 10.0
"""How often the watcher lists the backend's runs to find new ones."""
MAX_SEEN = 512
"""Proposals marked seen that a restarted watcher is told about again."""


class AppAlerts:
    """The app's watcher, ledger and hook, and the counter they feed (see module doc)."""

    def __init__(
        self,
        app: App[Any],
        settings: Settings,
        session: Session,
        *,
        ledger: SentLedger | None = None,
    ) -> None:
        self.app = app
        self.settings = settings
        self.session = session
        self.alerter = Alerter(app, ledger=ledger)
        self.needs_you = NOTHING
        self.poll_s = POLL_S
        self.watcher: RunsWatcher | None = None
        self._worker: Worker[None] | None = None
        self._ticker: Timer | None = None
        self._seen: dict[str, None] = {}
        """Proposals whose modal was shown, oldest first (bounded)."""
        self._lent: dict[str, tuple[int, Run | None]] = {}
        """Runs a screen follows itself: how many screens, the latest snapshot of one."""

    # ------------------------------------------------------------ lifetime

    def start(self) -> None:
        """Follow the backend's runs (again, after a reconnect: a fresh watcher); not
        while the login prompt waits (logging in starts it)."""
        login = sys.modules.get("ito_tui.tui.screens.login")
        if login is not None and any(
            isinstance(s, login.LoginModal) for s in self.app.screen_stack
        ):
            return
        alerts = self.settings.alerts
        if self.alerter.ledger is None:
            from ito_tui.alerting.ledger import SentLedger

            self.alerter.ledger = SentLedger.for_backend(self.settings.backend_url)
        if self.alerter.hook is None and alerts.command:
            self.alerter.hook = self._hook()
        self.stop()
        self._worker = self.app.run_worker(
            self._watch, group="alerts-watch", exclusive=True, exit_on_error=False
        )

    def _hook(self) -> CommandHook:
        from ito_tui.alerting.hook import CommandHook

        alerts = self.settings.alerts
        return CommandHook(
            alerts.command, timeout_s=alerts.command_timeout_s, on_failure=self._hook_failed
        )

    def _hook_failed(self, detail: str) -> None:
        # The hook calls this once (its first failure); the log has every one.
        self.app.notify(detail, title="Alert command failed", severity="error", markup=False)

    async def _watch(self) -> None:
        # Imported here: the watcher brings the client, which the first frame does without.
        from ito_tui.alerting.watcher import RunsWatcher
        from ito_tui.client import AuthError, ItoError

        alerts = self.settings.alerts
        watcher = RunsWatcher(
            self.app.client,  # type: ignore[attr-defined]  # ItoApp's; App has none
            on_alert=self._on_alert,
            on_change=self._on_change,
            operator=self.session.operator,
            runs=alerts.runs,
            poll_s=self.poll_s,
            stall_after_s=alerts.stall_after_s,
        )
        for proposal_id in self._seen:
            watcher.mark_seen(proposal_id)
        self.watcher = watcher
        for run_id, (_, snapshot) in self._lent.items():
            watcher.lend(run_id, snapshot)
        try:
            await watcher.run()
        except AuthError as exc:
            # The token stopped working: the app's one error sink asks to log in (which
            # stops this watcher; logging in starts another).
            self.app.post_message(WorkerFailed(exc))
        except ItoError as exc:
            # `runs.read` is missing (or worse): other runs no longer alert; ctrl+l retries.
            failure = describe_failure(exc)
            log.warning("alerts across runs stopped: %s", failure.detail)
            self.app.notify(
                f"Other runs no longer alert: {failure.detail}",
                title="Alerts stopped",
                severity="error",
                markup=False,
            )

    def stop(self) -> None:
        """Stop following (on a reconnect, before a new watcher starts)."""
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        self.watcher = None

    async def aclose(self) -> None:
        """Stop following and kill a command still running (the app is closing)."""
        self.stop()
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self.alerter.hook is not None:
            await self.alerter.hook.aclose()

    # ------------------------------------------------------------ the watcher's news

    def _on_alert(self, alert: Alert) -> None:
        if not self.app.screen_stack:
            return  # the app is closing: not sent, so not marked sent (the next start sends it)
        self.alerter.alert(alert)

    def _on_change(self, needs_you: NeedsYou) -> None:
        self.needs_you = needs_you
        self.alerter.needs_you_changed(tuple(p.run_id for p in needs_you.pending))
        if needs_you.pending and self._ticker is None:
            self._ticker = self.app.set_interval(TICK_S, self._tick)
        elif not needs_you.pending and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._tick()

    def _tick(self) -> None:
        stack = self.app.screen_stack
        if not stack:
            return  # the app is closing: the watcher's last news has no screen to go to
        for screen in stack:
            for header in screen.query(HeaderStrip):
                self.badge(header)
        stack[-1].post_message(NeedsYouChanged(self.needs_you))

    def badge(self, header: HeaderStrip) -> None:
        """Show what needs you in `header` (a new screen's, or on every tick)."""
        pending = self.needs_you.pending
        header.needs_you = len(pending)
        header.needs_you_left_s = self.left_s(pending[0].expires_at) if pending else None

    def left_s(self, expires_at: datetime | None) -> float | None:
        """Seconds until `expires_at` on the session's clock (None: no expiry known)."""
        if expires_at is None:
            return None
        return (expires_at - self.session.clock()).total_seconds()

    # ------------------------------------------------------------ the screens

    def screen_changed(self, screen: Screen[Any]) -> None:
        """`screen` came on top: its header shows the counter, a proposal's modal marks
        the proposal seen, and the alerts that waited for a modal to close show."""
        for header in screen.query(HeaderStrip):
            self.badge(header)
        shows = getattr(screen, "shows", None)
        proposal = getattr(screen, "proposal", None)
        if callable(shows) and proposal is not None:
            self.mark_seen(proposal.proposal_id)
        if getattr(screen, "HOLDS_TOASTS", False):
            self.alerter.hold_shown()
        elif screen.is_modal:
            self.alerter.release()  # the title stays the one of the screen below
        else:
            self.alerter.screen_changed(shown_run(screen))

    def jump(self) -> None:
        """Open the most urgent proposal (its run's pipeline, with its modal)."""
        urgent = self.needs_you.most_urgent()
        if urgent is None:
            self.app.notify("Nothing needs you: no proposal is waiting.", markup=False)
            return
        top = self.app.screen
        shows = getattr(top, "shows", None)
        if callable(shows) and shows(urgent.proposal_id):
            return  # its modal is up already
        if shown_run(top) == urgent.run_id:
            top.open_proposal(urgent.proposal_id)  # type: ignore[attr-defined]  # a pipeline
        else:
            self.app.push_screen(run_screen(urgent.run_id, review_on_open=True))

    # ------------------------------------------------------------ runs a screen follows

    def lend(self, run_id: str) -> None:
        """A screen follows `run_id` (from its mount on): the watcher takes its events
        (`observe`) instead of following a second stream of it."""
        count, snapshot = self._lent.get(run_id, (0, None))
        self._lent[run_id] = (count + 1, snapshot)
        if self.watcher is not None:
            self.watcher.lend(run_id)

    def lent_snapshot(self, run_id: str, snapshot: Run) -> None:
        """The snapshot the screen following `run_id` starts from (what is pending)."""
        if run_id in self._lent:
            self._lent[run_id] = (self._lent[run_id][0], snapshot)
            if self.watcher is not None:
                self.watcher.lend(run_id, snapshot)

    def observe(self, run_id: str, event: EventBase, state: RunState) -> None:
        """An event the screen following `run_id` applied as new."""
        if self.watcher is not None and run_id in self._lent:
            self.watcher.observe(run_id, event, state)

    def give_back(self, run_id: str) -> None:
        """A screen no longer follows `run_id` (closed, or its stream failed)."""
        count, snapshot = self._lent.get(run_id, (0, None))
        if count > 1:
            self._lent[run_id] = (count - 1, snapshot)
            return
        if self._lent.pop(run_id, None) is not None and self.watcher is not None:
            self.watcher.give_back(run_id)

    def mark_seen(self, proposal_id: str) -> None:
        """The operator was shown `proposal_id` (its modal): if it expires or someone
        else decides it, it was not missed unseen."""
        self._seen[proposal_id] = None
        while len(self._seen) > MAX_SEEN:
            del self._seen[next(iter(self._seen))]
        if self.watcher is not None:
            self.watcher.mark_seen(proposal_id)
