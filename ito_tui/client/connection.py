"""What the event stream tells a person about its connection: `ConnectionState` and `Flaps`.

A flapping stream (a load balancer closing it every few seconds, a backend
answering 503 for an hour) must not print a line per reconnect: `Flaps` lets
the first reconnect of an episode through, then one line at the 10th, 100th,
1000th… (with the count and the last reason), and a summary when the episode
ends. The stream's log and `watch`'s stderr both go through it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["QUIET_S", "ConnectionState", "Flaps", "Status"]

Status = Literal["connecting", "live", "reconnecting", "resynced", "closed"]

QUIET_S = 120.0
"""Seconds without a reconnect after which a flapping episode counts as over."""


@dataclass(frozen=True)
class ConnectionState:
    """What the UI shows about the stream: `live`, `reconnecting in N s`, `resynced`…

    `attempt` counts consecutive reconnects that brought no new event (0 while
    healthy); `reconnects` every reconnect since the stream was opened; `last_seq`
    is the last seq yielded; `error` the last problem seen; `note` what the last
    `resynced` was about (a snapshot re-read after the stream ended early, or a
    history that went backwards).
    """

    status: Status = "connecting"
    retry_in_s: float | None = None
    attempt: int = 0
    last_seq: int = 0
    error: str | None = None
    reconnects: int = 0
    note: str | None = None


def _worth_a_line(count: int) -> bool:
    """The 1st, 10th, 100th, 1000th… reconnect of an episode."""
    while count >= 10 and count % 10 == 0:
        count //= 10
    return count == 1


class Flaps:
    """Which reconnects get a line (see module docstring); returns the lines, prints nothing."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.count = 0
        """Reconnects in the current episode."""
        self._reported = 0
        self._started = 0.0
        self._last_at = 0.0
        self._reason = ""

    def reconnect(self, reason: str, retry_in_s: float | None) -> list[str]:
        """Record one reconnect; the lines to show now (often none)."""
        now = self._clock()
        lines = self._ended(now)
        if self.count == 0:
            self._started = now
        self.count += 1
        self._last_at = now
        self._reason = reason
        if _worth_a_line(self.count):
            self._reported = self.count
            wait = f" in {retry_in_s:.0f} s" if retry_in_s is not None else ""
            if self.count == 1:
                lines.append(f"connection lost ({reason}); reconnecting{wait}")
            else:
                lines.append(
                    f"connection still unstable: {self.count} reconnects in "
                    f"{now - self._started:.0f} s; last: {reason}; reconnecting{wait}"
                )
        return lines

    def close(self) -> list[str]:
        """The summary of an episode whose last reconnects were not shown yet (or nothing)."""
        return self._ended(None)

    def _ended(self, now: float | None) -> list[str]:
        if self.count == 0 or (now is not None and now - self._last_at < QUIET_S):
            return []
        lines = []
        if self.count > self._reported:
            lines.append(
                f"connection was unstable: {self.count} reconnects in "
                f"{self._last_at - self._started:.0f} s; last: {self._reason}"
            )
        self.count = self._reported = 0
        return lines
