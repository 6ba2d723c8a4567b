"""Alerts for operators in tmux: a toast, the terminal bell and the terminal title.

On a new proposal, a failed gate, a budget warning, an SLO breach and the end of a run
the pipeline screen raises an `Alert`; each channel can be switched off in
`Settings.alerts`. Textual does not set the terminal's title itself (`App.title` is only
drawn by its Header widget), so the title is written as an OSC 2 sequence through the
driver, which is what tmux shows as `#{pane_title}`.

A burst of alerts of one kind (3,000 SLO breaches from a backend replaying its faults)
is one toast and one bell for the first, then one summary toast with the count at the end
of a `COALESCE_S` window; the event log still lists each. One toast per alert cost Textual
a re-layout of every toast on screen per alert: a core for tens of seconds, keys stuck.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from ito_tui.contract import EventBase
from ito_tui.format import percent, special_duration
from ito_tui.textsafe import one_line

if TYPE_CHECKING:
    from textual.app import App

    from ito_tui.state import RunState

Severity = Literal["information", "warning", "error"]

MAX_SENT = 200
"""Alerts an `Alerter` remembers (`sent`)."""
MAX_HELD = 8
"""Toasts held while a modal is up; older ones are dropped (the event log keeps all)."""

COALESCE_S = 2.0
"""After an alert, more of its kind within this window are counted and raised as one."""

STAGE_WORDS = {"mid_train": "mid-train", "long_context": "long-context", "data_prep": "data prep"}

PLURALS = {
    "proposal": "proposals",
    "gate_failed": "failed gates",
    "budget": "budget warnings",
    "slo": "SLO breaches",
    "run_end": "run ends",
}


@dataclass(frozen=True)
class Alert:
    """Something an operator away from the pane should notice."""

    kind: str
    """proposal, gate_failed, budget, slo, run_end."""
    title: str
    message: str
    severity: Severity = "warning"


def alert_for(event: EventBase, state: RunState) -> Alert | None:
    """The alert an event raises, if any (pure: the screen decides when to call it)."""
    data: Any = getattr(event, "data", None)
    run = state.run_id
    if event.type == "proposal.created" and data is not None:
        p = data.proposal
        return Alert(
            "proposal",
            "Needs approval",
            f"{run}: {one_line(str(p.kind))} proposed; the run is paused until someone decides.",
        )
    if event.type == "gate.failed" and data is not None:
        gate = data.gate
        failing = ", ".join(one_line(r.benchmark) for r in gate.failing) or "a benchmark"
        return Alert(
            "gate_failed",
            "Gate failed",
            f"{run}: {one_line(str(gate.stage))} gate failed ({failing}); the run was stopped.",
            "error",
        )
    if event.type == "budget.warning" and data is not None:
        return Alert(
            "budget",
            "Budget warning",
            f"{run}: ${data.usd_spent:,.0f} of ${data.budget_usd:,.0f} spent "
            f"(≥ {percent(data.threshold_frac)}).",
        )
    if event.type == "slo.breached" and data is not None:
        limit = "detect < 10 min" if str(data.slo) == "detect" else "resume < 15 min"
        return Alert(
            "slo",
            "SLO breached",
            f"{run}: fault {one_line(str(data.slo))} took {_minutes(data.value_s)} ({limit}).",
        )
    if event.terminal:
        outcome = state.outcome or event.type.removeprefix("run.")
        severity: Severity = "information" if outcome == "completed" else "error"
        return Alert("run_end", f"Run {outcome}", f"{run} ended: {outcome}.", severity)
    return None


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
    return Alert(
        kind,
        f"{total:,} {what}",
        f"{more:,} more in {span} (each is in the event log); the latest: {latest.message}",
        latest.severity,
    )


def _minutes(seconds: float) -> str:
    """`21 min`, as the SLO limits are worded; NaN, ∞ or `>999d` when not a real time."""
    return special_duration(seconds) or f"{seconds / 60:.0f} min"


def terminal_title(state: RunState) -> str:
    """`ito · run_x · pretrain 42% · NEEDS APPROVAL` — the run at a glance."""
    parts = ["ito", state.run_id]
    if state.terminal:
        parts.append(state.outcome or state.state)
    elif state.current_stage:
        stage = state.stage(state.current_stage)
        frac = stage.progress.frac if stage is not None and stage.progress else None
        word = STAGE_WORDS.get(state.current_stage, state.current_stage)
        parts.append(f"{word} {percent(frac)}" if frac else word)
    if state.pending_proposals:
        parts.append("NEEDS APPROVAL")
    elif state.failure is not None and str(state.failure.kind) == "gate_failed":
        parts.append("GATE FAILED")
    return one_line(" · ".join(parts), max_len=120)


class Alerter:
    """Sends alerts through the channels the settings leave switched on."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.sent: deque[Alert] = deque(maxlen=MAX_SENT)
        """The newest alerts raised (bounded: the TUI stays open for days)."""
        self.title: str | None = None
        self._held: deque[Alert] = deque(maxlen=MAX_HELD)
        """Toasts waiting for a screen that holds them (`HOLDS_TOASTS`) to close."""
        self._windows: dict[str, _Window] = {}
        """Per alert kind, the window its last raised alert or summary opened."""

    def _switch(self, name: str) -> bool:
        settings = getattr(self.app, "settings", None)
        switches = getattr(settings, "alerts", None)
        return bool(getattr(switches, name, True))

    def alert(self, alert: Alert, *, toast: bool = True) -> None:
        """Raise `alert` on every channel switched on; `toast=False` leaves the toast out.

        Within `COALESCE_S` of the last raised alert of its kind it is only counted: the
        window's end raises one summary (a toast, no second bell) and opens the next, so
        a storm that goes on is one toast per kind per window. A window whose summary is
        due but not raised yet (the loop is busy) keeps counting.
        """
        self.sent.append(alert)
        now = time.monotonic()
        window = self._windows.get(alert.kind)
        if window is not None and (now - window.opened < COALESCE_S or window.timer is not None):
            window.more += 1
            window.last, window.latest = now, alert
            window.toast = window.toast or toast
            if window.timer is None:
                flush = partial(self._flush, alert.kind)
                window.timer = self.app.set_timer(window.opened + COALESCE_S - now, flush)
            return
        self._windows[alert.kind] = _Window(now, before=1)
        self._raise(alert, toast=toast, ring=True)

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
        if toast and self._switch("toast"):
            if getattr(self.app.screen, "HOLDS_TOASTS", False):
                self._held.append(alert)
            else:
                self._toast(alert)
        if ring and self._switch("bell"):
            self.app.bell()

    def release(self) -> None:
        """Show the toasts held while a screen that holds them was on top."""
        while self._held and not getattr(self.app.screen, "HOLDS_TOASTS", False):
            self._toast(self._held.popleft())

    def _toast(self, alert: Alert) -> None:
        self.app.notify(alert.message, title=alert.title, severity=alert.severity, markup=False)

    def set_title(self, title: str) -> None:
        """Write the terminal title (OSC 2) when it changed; `title` records the last one.

        `App.title` is left alone: it is a reactive that repaints the whole screen, and no
        widget here draws it. A headless driver's `write` does nothing.
        """
        if title == self.title or not self._switch("title"):
            return
        self.title = title
        driver = getattr(self.app, "_driver", None)  # Textual has no public title API
        if driver is not None:
            driver.write(f"\x1b]2;{title}\x07")
