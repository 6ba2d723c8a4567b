"""SilenceBanner: the run screen's line when the run is silent — heartbeats, no progress.

`⏸ silent 12m: heartbeats but no progress since 14:02 UTC`. It draws what the app's one
silence detector says (`alerting/silence.py: SilenceClock`, kept by the app's
`RunsWatcher` for the run this screen follows: `RunsWatcher.silence(run_id)`); it
detects nothing itself. Checked when the screen hears the watcher's news (a spell starts
with no event at all, heartbeats being SSE comments: the watcher publishes it,
`NeedsYouChanged`), when the connection changes or the screen shows again, and once a
second during a spell (its minutes); no wake-up a second otherwise (bench #4). Drawn only
when its words change, gone when progress resumes. Times are on the backend's clock
(`sim_ts` in a demo), like the run's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from ito_tui.format import duration

if TYPE_CHECKING:
    from ito_tui.alerting.silence import SilenceClock

__all__ = ["TICK_S", "Silence", "SilenceBanner", "silence_of", "silence_text"]

TICK_S = 1.0


@dataclass(frozen=True)
class Silence:
    """A silent spell as the banner words it."""

    for_s: float
    """Backend-clock seconds since the last progress."""
    since: datetime | None
    """When the last progress was (backend clock, UTC)."""


def silence_of(clock: SilenceClock | None, now: float) -> Silence | None:
    """The spell `clock` is in at local time `now`, or None (no spell, no clock)."""
    if clock is None or not clock.silent:
        return None
    last = clock.last_progress
    since = datetime.fromtimestamp(last, UTC) if last is not None else None
    return Silence(clock.silent_for(now), since)


def silence_text(silence: Silence) -> str:
    """`⏸ silent 12m: heartbeats but no progress since 14:02 UTC` (to the minute: the
    banner changes once a minute, not every second)."""
    seconds = int(silence.for_s // 60) * 60
    if not seconds:
        spell = "<1m"
    elif seconds < 3600:
        spell = f"{seconds // 60}m"
    else:
        spell = duration(seconds)  # `2h00m`, `1d04h`
    text = f"⏸ silent {spell}: heartbeats but no progress"
    if silence.since is not None:
        text += f" since {silence.since:%H:%M} UTC"
    return text


class SilenceBanner(Static):
    """One line under the run strip while the run is silent; hidden otherwise."""

    DEFAULT_CSS = """
    SilenceBanner {
        display: none;
        height: 1;
        padding: 0 1;
        background: $warning 25%;
        color: $text;
        text-style: bold;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    SilenceBanner.-silent { display: block; }
    """

    silence: reactive[Silence | None] = reactive(None)

    def __init__(
        self,
        run_id: str,
        *,
        live: Callable[[], bool] = lambda: True,
        source: Callable[[], SilenceClock | None] | None = None,
        id: str | None = None,
    ) -> None:
        """`live`: whether the screen's stream is connected (a lost connection is the
        header's news, not the run's silence); `source` gives the run's silence clock
        (default: the app's watcher's, `RunsWatcher.silence(run_id)`)."""
        super().__init__(id=id, markup=False)
        self.run_id = run_id
        self.source = source or self._watchers_clock
        self.live = live
        self._words = ""
        self._ticker: Timer | None = None
        """Ticks once a second during a spell (its minutes), stopped otherwise."""

    def _watchers_clock(self) -> SilenceClock | None:
        # The app's one detector (`tui/needs_you.py: AppAlerts.watcher`); none before the
        # app is connected, or in an app without alerting.
        watcher = getattr(getattr(self.app, "alerting", None), "watcher", None)
        silence = getattr(watcher, "silence", None)
        return silence(self.run_id) if callable(silence) else None

    def on_mount(self) -> None:
        self.check()

    def check(self) -> None:
        """Read the clock now (the screen calls it on the watcher's news, a connection
        change, and when it shows again)."""
        clock = self.source() if self.live() else None
        self.silence = silence_of(clock, self._now())
        if self.silence is not None and self._ticker is None:
            self._ticker = self.set_interval(TICK_S, self.check, name="silence-banner")
        elif self.silence is None and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    @staticmethod
    def _now() -> float:
        # The watcher's clocks run on the event loop's time (`RunsWatcher`, `Lending`).
        return asyncio.get_running_loop().time()

    def watch_silence(self, silence: Silence | None) -> None:
        words = silence_text(silence) if silence is not None else ""
        if words == self._words:
            return
        self._words = words
        self.set_class(silence is not None, "-silent")
        self.update(words)
