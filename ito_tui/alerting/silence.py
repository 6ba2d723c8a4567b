"""`SilenceClock`: is a run silent — connected, heartbeats flowing, but no progress?

API.md "Silence": a run whose stream carries heartbeats but no `stage.progress` or
`telemetry` is silent; the client flags it after `stall_after_s`, measured on the
events' `sim_ts` (a demo's simulated clock), else on `ts`. The backend's own hang
detection may take longer; the operator hears from us first.

The backend's clock is known only when an event arrives, and a hung run may send none
at all (heartbeats are SSE comments). So between events the clock is extrapolated: the
last event's clock plus the wall time since it arrived times the rate the backend's clock
ran at (simulated seconds per second, from `sim_ts` against `ts` of events at least a
second apart; 1 without `sim_ts`).

Only a run that is `running` and has shown progress in its current stage can be silent:
data preparation, a plan, a gate, a paused run awaiting a decision or one recovering from
a fault make no progress by design. A state change restarts the count (a run resumed
after a long approval was not silent meanwhile). One spell of silence is one alert; the
next progress ends it.

Silence is judged against the run's own pace, too: a spell needs `CADENCE_FACTOR` times
the run's usual gap between progress events (the median of the last few, the first one
measured from the stage's start) besides `stall_after_s`, and `WALL_FLOOR_S` local seconds
(or `stall_after_s`, if shorter). A demo's clock runs thousands of times faster than ours
and its simulator reports once per tick: at 2,000× a tick is 74 simulated minutes, so a
checkpoint event arriving just before its tick's telemetry read as "no progress for 10
min" at every stage. A real trainer reports every few seconds, where both bounds change
nothing and `stall_after_s` decides.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from typing import TYPE_CHECKING

from ito_tui.format import duration
from ito_tui.textsafe import one_line

from .model import Alert

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ito_tui.contract import EventBase
    from ito_tui.state import RunState

__all__ = ["DUE_SLACK_S", "PROGRESS_TYPES", "SilenceClock", "next_due", "silent_alert"]

PROGRESS_TYPES = frozenset({"stage.progress", "telemetry"})
_RESTART_TYPES = frozenset({"run.state_changed", "stage.started", "resync"})
_RATE_SPAN_S = 1.0
"""Wall seconds (`ts`) between the two events a rate is measured on."""
_RATE_BOUNDS = (1e-3, 1e9)
WALL_FLOOR_S = 2.0
"""Local seconds without progress a silent spell needs besides `stall_after_s` on the
backend's clock (see the module docstring)."""
CADENCE_FACTOR = 3.0
"""A spell needs this many times the run's usual gap between progress events."""
_CADENCE_SAMPLES = 8
DUE_SLACK_S = 0.05
"""A checker wakes this long after `SilenceClock.due`: at the instant itself the clock's
extrapolation may round to a hair short of the bound."""


class SilenceClock:
    """One run's silence, on the backend's clock (see the module docstring)."""

    def __init__(self, stall_after_s: float, now: float) -> None:
        self.stall_after_s = stall_after_s
        self.rate = 1.0
        """Backend clock seconds per local second."""
        self.silent = False
        """In a silent spell (its alert was raised)."""
        self._latest: float | None = None
        """The backend clock at the latest event, and the local time it arrived."""
        self._latest_at = now
        self._progress: float | None = None
        """The backend clock at the last progress (or restart of the count)."""
        self._progress_at = now
        """The local time the last progress (or restart of the count) arrived."""
        self._progress_stage: str | None = None
        """The stage the last progress was in: only a stage that progressed can stall."""
        self._gaps: deque[float] = deque(maxlen=_CADENCE_SAMPLES)
        """The last gaps (backend clock) between progress events: the run's pace."""
        self._anchor: tuple[float, float] | None = None
        """(ts, sim_ts) of the event the next rate is measured from."""

    def observe(self, event: EventBase, now: float, *, state: str, stage: str | None) -> bool:
        """Take `event` (arrived at local time `now`); True when it shows a new silent spell
        (`state`/`stage`: the run's after the event)."""
        clock = event.at.timestamp()
        self._measure_rate(event)
        if self._latest is None or clock >= self._latest:
            self._latest, self._latest_at = clock, now
        if event.type in PROGRESS_TYPES:
            if self._progress is not None and clock > self._progress:
                self._gaps.append(clock - self._progress)
            self._progress, self._progress_at, self._progress_stage = clock, now, stage
            self.silent = False
            return False
        if event.type in _RESTART_TYPES:
            self._progress, self._progress_at = clock, now
            self.silent = False
            return False
        return self._judge(clock, now, state, stage)

    def check(self, now: float, *, state: str, stage: str | None, live: bool) -> bool:
        """True when, with no event since, the extrapolated clock shows a new silent spell;
        `live`: the stream is connected (a lost connection is not the run's silence)."""
        if not live or self._latest is None:
            return False
        estimate = self._latest + max(0.0, now - self._latest_at) * self.rate
        return self._judge(estimate, now, state, stage)

    @property
    def last_progress(self) -> float | None:
        """The backend clock (epoch seconds) at the last progress or restart of the count;
        None before any event (the run screen's banner: `no progress since 14:02 UTC`)."""
        return self._progress

    def silent_for(self, now: float) -> float:
        """Backend-clock seconds since the last progress (0 before any)."""
        if self._latest is None or self._progress is None:
            return 0.0
        return max(0.0, self._latest + max(0.0, now - self._latest_at) * self.rate - self._progress)

    def due(self) -> float | None:
        """The local time from which `check` can start a spell if no event comes first
        (the checker sleeps till then, not a wake-up a second); None while it cannot (in a
        spell, or nothing measured yet). A state or stage that cannot be silent is the
        checker's to know: this says when the clock's part is due."""
        if self.silent or self._progress is None or self._latest is None:
            return None
        pace = CADENCE_FACTOR * statistics.median(self._gaps) if self._gaps else 0.0
        ahead = self._progress + max(self.stall_after_s, pace) - self._latest
        backend = self._latest_at + max(0.0, ahead) / self.rate
        return max(backend, self._progress_at + min(WALL_FLOOR_S, self.stall_after_s))

    def _judge(self, clock: float, now: float, state: str, stage: str | None) -> bool:
        if self.silent or state != "running" or self._progress is None:
            return False
        if stage is None or stage != self._progress_stage:
            return False
        pace = CADENCE_FACTOR * statistics.median(self._gaps) if self._gaps else 0.0
        if clock - self._progress < max(self.stall_after_s, pace):
            return False
        if now - self._progress_at < min(WALL_FLOOR_S, self.stall_after_s):
            return False
        self.silent = True
        return True

    def _measure_rate(self, event: EventBase) -> None:
        if event.sim_ts is None:
            self.rate = 1.0
            return
        ts, sim = event.ts.timestamp(), event.sim_ts.timestamp()
        if self._anchor is None or ts < self._anchor[0]:
            self._anchor = (ts, sim)
            return
        span = ts - self._anchor[0]
        if span < _RATE_SPAN_S:
            return
        rate = (sim - self._anchor[1]) / span
        if math.isfinite(rate) and rate > 0:
            low, high = _RATE_BOUNDS
            self.rate = min(max(rate, low), high)
        self._anchor = (ts, sim)


def next_due(clocks: Iterable[SilenceClock | None], now: float) -> float:
    """The earliest `due` of `clocks` still to come after `now` (+ `DUE_SLACK_S`), inf if
    none: one already past did not start a spell at its check (a run waiting for a person,
    a stream reconnecting), and waits for an event to set it again."""
    dues = (c.due() for c in clocks if c is not None)
    return min((d + DUE_SLACK_S for d in dues if d is not None and d > now), default=math.inf)


def silent_alert(state: RunState, stall_after_s: float) -> Alert:
    """The alert of a silent spell of the run in `state` (the watcher's and `watch`'s)."""
    return Alert(
        "silent",
        state.run_id,
        "Run silent",
        f"{one_line(state.run_id)}: no progress for {duration(stall_after_s)} while "
        "the backend is connected; it has not reported a fault.",
        stage=state.current_stage,
        seq=state.last_seq,
    )
