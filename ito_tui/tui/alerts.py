"""The app's alert router: each alert once, to the channels the settings allow.

Every alert of every run the app follows (the `RunsWatcher`'s, and those of the run on
a pipeline screen) comes through the app's one `Alerter`. A `SentLedger` lets each
alert key through once, also across reconnects and restarts; then the alert goes to
the channels `[alerts]` allows for its kind: a toast, the terminal bell, the terminal
title (OSC 2, what tmux shows as `#{pane_title}`), a desktop notification (OSC 9 or
777, wrapped for tmux's passthrough) and the command hook.

A burst of alerts of one kind (3,000 SLO breaches from a backend replaying its faults)
is one toast, one bell and one desktop notification for the first, then one summary
toast with the count at the end of a `COALESCE_S` window; the event log still lists
each and the command hook coalesces on its own. One toast per alert cost Textual a
re-layout of every toast on screen per alert: a core for tens of seconds, keys stuck.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import ScreenStackError, UnknownModeError

from ito_tui.alerting.osc import desktop_mode, in_tmux, notification
from ito_tui.format import percent, stage_label
from ito_tui.textsafe import one_line
from ito_tui.tui.textual_private import write_to_terminal  # App._driver is private

if TYPE_CHECKING:
    from textual.app import App

    from ito_tui.alerting.hook import CommandHook
    from ito_tui.alerting.ledger import SentLedger
    from ito_tui.alerting.model import Alert
    from ito_tui.config import Alerts
    from ito_tui.state import RunState

MAX_SENT = 200
"""Alerts an `Alerter` remembers (`sent`)."""
MAX_HELD = 8
"""Toasts held while a modal is up; older ones are dropped (the event log keeps all)."""

COALESCE_S = 2.0
"""After an alert, more of its kind within this window are counted and raised as one."""

BASE_TITLE = "ito"
"""The terminal title on a screen that is not a run's."""

PLURALS = {
    "proposal": "proposals",
    "gate_failed": "failed gates",
    "budget": "budget warnings",
    "slo": "SLO breaches",
    "node_failed": "node failures",
    "straggler": "stragglers",
    "silent": "silence alerts",
    "run_end": "run ends",
    "proposal_missed": "missed proposals",
}


@dataclass
class _Window:
    """Alerts of one kind counted since the window opened, not raised yet."""

    opened: float
    before: int
    """Alerts of this burst raised or summarised before the window opened."""
    more: int = 0
    last: float = 0.0
    latest: Alert | None = None
    toast: bool = False
    """Whether any of them wanted a toast."""
    timer: Any = field(default=None, repr=False)


def summary_of(kind: str, total: int, more: int, seconds: float, latest: Alert) -> Alert:
    """One alert for `more` alerts of `kind`, `total` in the burst so far, the latest
    `seconds` into the window: "3,000 SLO breaches" / "2,999 more in under 1 s …"."""
    what = PLURALS.get(kind, "alerts")
    span = "under 1 s" if seconds < 1 else f"{seconds:,.0f} s"
    return replace(
        latest,
        title=f"{total:,} {what}",
        summary=f"{more:,} more in {span} (each is in the event log); the latest: {latest.summary}",
    )


def terminal_title(state: RunState) -> str:
    """`ito · run_x · pretrain 42% · NEEDS APPROVAL` — the run at a glance."""
    parts = [BASE_TITLE, state.run_id]
    if state.terminal:
        parts.append(state.outcome or state.state)
    elif state.current_stage:
        stage = state.stage(state.current_stage)
        frac = stage.progress.frac if stage is not None and stage.progress else None
        word = stage_label(state.current_stage)
        parts.append(f"{word} {percent(frac)}" if frac else word)
    if state.pending_proposals:
        parts.append("NEEDS APPROVAL")
    elif state.failure is not None and str(state.failure.kind) == "gate_failed":
        parts.append("GATE FAILED")
    return one_line(" · ".join(parts), max_len=120)


class Alerter:
    """Sends each alert once through the channels the settings leave switched on.

    `ledger` remembers which alert keys went out (None: nothing is deduplicated);
    `hook` is the `[alerts] command` (None: no command); `environ` picks the desktop
    notification's sequence and says whether it needs tmux's passthrough.
    """

    def __init__(
        self,
        app: App[Any],
        *,
        ledger: SentLedger | None = None,
        hook: CommandHook | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.app = app
        self.ledger = ledger
        self.hook = hook
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.sent: deque[Alert] = deque(maxlen=MAX_SENT)
        """The newest alerts raised (bounded: the TUI stays open for days)."""
        self.title: str | None = None
        """The terminal title written last (None: never written)."""
        self.desktop_sent = 0
        """Desktop notifications written (one per burst of a kind)."""
        self._base = BASE_TITLE
        self._base_run: str | None = None
        self._note: str | None = None
        """The latest alert of another run for the title, until that run is on screen."""
        self._note_run: str | None = None
        self._pending_runs: tuple[str, ...] = ()
        self._held: deque[Alert] = deque(maxlen=MAX_HELD)
        """Toasts waiting for a screen that holds them (`HOLDS_TOASTS`) to close."""
        self._shown: deque[tuple[float, Alert]] = deque(maxlen=MAX_HELD)
        """The latest alert toasts and when they went up (`hold_shown`)."""
        self._windows: dict[str, _Window] = {}
        """Per alert kind, the window its last raised alert or summary opened."""

    # ------------------------------------------------------------ channels

    def _settings(self) -> Alerts | None:
        return getattr(getattr(self.app, "settings", None), "alerts", None)

    def wants(self, kind: str, channel: str) -> bool:
        """Whether `[alerts]` sends alerts of `kind` to `channel`."""
        settings = self._settings()
        if settings is None:
            return channel in ("bell", "toast", "title")
        return settings.wants(kind, channel)

    def alert(self, alert: Alert, *, toast: bool = True) -> bool:
        """Raise `alert` on every channel it wants, unless its key went out already
        (False then); `toast=False` leaves the toast out.

        Within `COALESCE_S` of the last raised alert of its kind it is only counted: the
        window's end raises one summary (a toast, no second bell or notification) and
        opens the next, so a storm that goes on is one toast per kind per window. A
        window whose summary is due but not raised yet (the loop is busy) keeps counting.
        """
        runs = getattr(self._settings(), "runs", ())
        if runs and alert.run_id not in runs:
            return False  # `[alerts] runs` names the runs that alert, on screen or not
        if self.ledger is not None and not self.ledger.first_time(alert.key()):
            return False
        self.sent.append(alert)
        toast = toast and not self._covered(alert)
        if self.hook is not None and self.wants(alert.kind, "command"):
            self.hook.submit(alert)  # never blocks: the hook runs it as an asyncio task
        # Someone glancing at tmux's window list sees it; a proposal is in the count.
        note = f"⚠ {alert.run_id}: {alert.title}"
        news = alert.kind != "proposal" and alert.run_id != self._base_run and note != self._note
        if news and self.wants(alert.kind, "title"):
            self._note, self._note_run = note, alert.run_id
            self._write_title()
        now = time.monotonic()
        window = self._windows.get(alert.kind)
        if window is not None and (now - window.opened < COALESCE_S or window.timer is not None):
            window.more += 1
            window.last, window.latest = now, alert
            window.toast = window.toast or toast
            if window.timer is None:
                flush = partial(self._flush, alert.kind)
                window.timer = self.app.set_timer(window.opened + COALESCE_S - now, flush)
            return True
        self._windows[alert.kind] = _Window(now, before=1)
        self._raise(alert, toast=toast, ring=True)
        return True

    def _top(self) -> Any:
        """The screen on top; None while the app has none (it is closing, and a summary's
        timer fired: that raised `ScreenStackError` out of the timer and failed the app)."""
        try:
            return self.app.screen
        except (ScreenStackError, UnknownModeError):
            return None

    def _covered(self, alert: Alert) -> bool:
        """Whether the screen on top is, or is about to show, the alert's proposal: the
        proposal's modal, or its run's pipeline (which opens that modal itself)."""
        if alert.kind != "proposal":
            return False
        top = self._top()
        shows = getattr(top, "shows", None)
        if callable(shows) and alert.proposal_id is not None and shows(alert.proposal_id):
            return True
        return getattr(top, "run_id", None) == alert.run_id and hasattr(top, "open_proposal")

    def _flush(self, kind: str) -> None:
        window = self._windows.pop(kind, None)
        if window is None or window.latest is None:
            return
        total = window.before + window.more
        self._windows[kind] = _Window(time.monotonic(), before=total)
        seconds = window.last - window.opened
        summary = summary_of(kind, total, window.more, seconds, window.latest)
        # The window's first alert rang already: one bell per burst.
        self._raise(summary, toast=window.toast, ring=False)

    def _raise(self, alert: Alert, *, toast: bool, ring: bool) -> None:
        top = self._top()
        if top is None:
            return  # no screen: the app is closing (the event log and the ledger have it)
        if toast and self.wants(alert.kind, "toast"):
            if getattr(top, "HOLDS_TOASTS", False):
                self._held.append(alert)
            else:
                self._toast(alert)
        if ring and self.wants(alert.kind, "bell"):
            self.app.bell()
        if ring and self.wants(alert.kind, "desktop"):
            self._desktop(alert)

    def _desktop(self, alert: Alert) -> None:
        mode = desktop_mode(getattr(self._settings(), "desktop", "auto"), self.environ)
        if mode is not None:
            write_to_terminal(self.app, notification(alert, mode, tmux=in_tmux(self.environ)))
            self.desktop_sent += 1

    def release(self) -> None:
        """Show the toasts held while a screen that holds them was on top."""
        while (
            self._held
            and (top := self._top()) is not None
            and not getattr(top, "HOLDS_TOASTS", False)
        ):
            self._toast(self._held.popleft())

    def hold_shown(self) -> None:
        """A screen that holds toasts came on top: the alert toasts still up would cover
        it (at 80×24 two of them hid the proposal modal's title and expiry line), so they
        come down and show again when it closes, with the ones raised meanwhile."""
        now = time.monotonic()
        timeout = self.app.NOTIFICATION_TIMEOUT
        up = [alert for at, alert in self._shown if now - at < timeout]
        self._shown.clear()
        if up:
            self.app.clear_notifications()
            self._held.extendleft(reversed(up))

    def _toast(self, alert: Alert) -> None:
        self._shown.append((time.monotonic(), alert))
        self.app.notify(alert.summary, title=alert.title, severity=alert.severity, markup=False)

    # ------------------------------------------------------------ the terminal title

    def set_title(self, title: str, run_id: str | None = None) -> None:
        """Make `title` the base of the terminal title (`run_id`: the run it is about;
        its alerts are in it already). Written when the title changes."""
        self._base, self._base_run = title, run_id
        if run_id is not None and self._note_run == run_id:
            self._note = self._note_run = None  # the run the note was about is on screen
        self._write_title()

    def screen_changed(self, run_id: str | None) -> None:
        """A screen came on top; `run_id` is the run it shows, if any. Held toasts show
        when it does not hold them, and the title no longer describes a run that is
        not on screen."""
        self.release()
        if run_id != self._base_run:
            # Until that run's screen sets its own title (at once, once it is loaded).
            self._base, self._base_run = BASE_TITLE, run_id
        self._write_title()

    def needs_you_changed(self, pending_runs: tuple[str, ...]) -> None:
        """The runs of the pending proposals across every run (one entry per proposal)."""
        self._pending_runs = pending_runs
        self._write_title()

    def _write_title(self) -> None:
        """Write the composed title (OSC 2) when it changed; `title` records the last one.

        `App.title` is left alone: it is a reactive that repaints the whole screen, and no
        widget here draws it.
        """
        if not getattr(self._settings(), "title", True):
            return
        parts = [self._base]
        others = [r for r in self._pending_runs if r != self._base_run]
        if others and self.wants("proposal", "title"):
            count = len(self._pending_runs)
            parts.append(f"⚠ {count:,} NEED{'S' if count == 1 else ''} YOU")
        if self._note is not None:
            parts.append(self._note)
        title = one_line(" · ".join(parts), max_len=120)
        if title == self.title or (self.title is None and title == BASE_TITLE):
            return  # unchanged, or nothing to say yet: the shell's own title stays
        self.title = title
        write_to_terminal(self.app, f"\x1b]2;{title}\x07")
