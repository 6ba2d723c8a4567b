"""`watch --alert-command`: the TUI's command hook, headless, for cron and systemd units.

Every event `watch` streams goes through `ito_tui.alerting.model.alert_for`, the
mapping the TUI uses, so both raise the same alerts. An alert runs the command once,
with the alert as JSON on stdin (`ito_tui.alerting.hook.CommandHook`: argv only, a
timeout, at most one process in flight per kind, never the token); `[alerts.kinds]`
picks the kinds that use the `command` channel. What was sent is remembered in the state
dir (`SentLedger.for_backend`), so nothing is sent twice: a unit that restarts
`watch RUN --since 0 --alert-command …` replays the run, sends what it missed while it
was down and nothing it sent before. A replayed proposal alerts only while it still waits
for a person (a long-decided one is not news). A run that goes silent while `watch`
follows it (heartbeats but no progress for `[alerts] stall_after_s`, on the run's own
clock: `ito_tui.alerting.silence`) alerts too, once per silent spell, as in the TUI.
Before `watch` exits it waits for the commands still running or queued, bounded by
twice `command_timeout_s`.

Imported only when an alert command is asked for: a plain `watch` loads none of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .context import CommandError, Context
from .exitcodes import ExitCode
from .output import safe

if TYPE_CHECKING:
    from ito_tui.alerting.hook import CommandHook
    from ito_tui.alerting.ledger import SentLedger
    from ito_tui.alerting.model import Alert
    from ito_tui.alerting.silence import SilenceClock
    from ito_tui.client import ConnectionState
    from ito_tui.config import Alerts
    from ito_tui.contract import EventBase
    from ito_tui.state import RunState

SILENCE_CHECK_S = 1.0
"""How often a run with no events is checked for silence (heartbeats are not events)."""

LEDGER_PREFIX = "watch-command|"
"""Ledger keys of `watch`'s hook are its own: an alert the TUI only rang a bell for must
still run the command of a watch that follows the same run."""


def alert_argv(ctx: Context) -> tuple[str, ...] | None:
    """The hook's argv: `--alert-command PROG` with each `--alert-arg`, or the
    `[alerts] command` setting for `--alerts`; None when neither is given."""
    prog: str | None = getattr(ctx.args, "alert_command", None)
    args: Sequence[str] = getattr(ctx.args, "alert_arg", None) or ()
    if prog is not None:
        if not prog:
            raise CommandError("--alert-command needs a program", ExitCode.USAGE)
        return (prog, *args)
    if args:
        raise CommandError("--alert-arg needs --alert-command", ExitCode.USAGE)
    if not getattr(ctx.args, "alerts", False):
        return None
    command = ctx.settings.alerts.command
    if not command:
        raise CommandError(
            '--alerts: no command is set; set `[alerts] command = ["prog", "arg"]` in '
            "the settings file or pass --alert-command PROG",
            ExitCode.USAGE,
        )
    return tuple(command)


class AlertSink:
    """Turns the events `watch` follows into runs of the alert command (once each)."""

    def __init__(self, hook: CommandHook, ledger: SentLedger, settings: Alerts) -> None:
        self.hook = hook
        self.ledger = ledger
        self.settings = settings
        self._waiting: frozenset[str] = frozenset()
        self._clock: SilenceClock | None = None
        self._state: RunState | None = None
        self._live = False

    def start(self, pending_proposal_ids: Sequence[str]) -> None:
        """The proposals that wait for a person when the watch starts (its snapshot)."""
        self._waiting = frozenset(pending_proposal_ids)

    def offer(self, event: EventBase, state: RunState, *, replayed: bool = False) -> None:
        """Run the command for the alert `event` raises, unless it was sent already."""
        from ito_tui.alerting.model import alert_for

        if not replayed:
            self._state = state
            clock = self._silence_clock()
            if clock.observe(event, _now(), state=state.state, stage=state.current_stage):
                self._send(self._silent(state))
        alert = alert_for(event, state)
        if alert is None:
            return
        if replayed and alert.kind == "proposal" and alert.proposal_id not in self._waiting:
            return
        self._send(alert)

    def connection(self, state: ConnectionState) -> None:
        """The stream's state: a dropped connection is not the run's silence."""
        self._live = state.status in ("live", "resynced")

    async def watch_silence(self) -> None:
        """Until cancelled, check once a second whether the run went silent between events."""
        while True:
            await asyncio.sleep(SILENCE_CHECK_S)
            state, clock = self._state, self._clock
            if state is None or clock is None:
                continue
            stage = state.current_stage
            if clock.check(_now(), state=state.state, stage=stage, live=self._live):
                self._send(self._silent(state))

    def _silence_clock(self) -> SilenceClock:
        if self._clock is None:
            from ito_tui.alerting.silence import SilenceClock

            self._clock = SilenceClock(self.settings.stall_after_s, _now())
        return self._clock

    def _silent(self, state: RunState) -> Alert:
        from ito_tui.alerting.silence import silent_alert

        return silent_alert(state, self.settings.stall_after_s)

    def _send(self, alert: Alert) -> None:
        if not self.settings.wants(alert.kind, "command"):
            return
        if self.ledger.first_time(LEDGER_PREFIX + alert.key()):
            self.hook.submit(alert)

    async def close(self) -> None:
        """Wait (bounded) for the commands in flight and queued, then stop what is left."""
        try:
            await self.hook.drain(2 * self.settings.command_timeout_s + 1.0)
        finally:
            await self.hook.aclose()


def _now() -> float:
    return asyncio.get_running_loop().time()


def alert_sink(ctx: Context) -> AlertSink | None:
    """The sink for this `watch`, or None when no alert command was asked for."""
    argv = alert_argv(ctx)
    if argv is None:
        return None
    from ito_tui.alerting.hook import CommandHook
    from ito_tui.alerting.ledger import SentLedger

    settings = dataclasses.replace(ctx.settings.alerts, command=argv)

    def failed(message: str) -> None:
        ctx.out.warn(f"alert command {safe(argv[0])}: {safe(message)}")

    hook = CommandHook(argv, timeout_s=settings.command_timeout_s, on_failure=failed)
    return AlertSink(hook, SentLedger.for_backend(ctx.backend_url), settings)
