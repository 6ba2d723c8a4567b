"""`Pace`: the current stage's measured progress over time, bounded, for the projection.

Each live telemetry event gives (x = its `sim_ts`, else `ts`, in seconds: the run's
clock; the sample's step; its spend). Not a sample's own `ts`: desk_sim writes the wall
clock there, which at "an hour a second" would make every run look 3,600× faster.
`Pace` keeps a decimated history of the current stage: every sample until `cap`
points, then every second, fourth, … one (the kept points halve when full), so a
90-day stage costs the same 256 points as a 5-minute one and its whole span stays
measured. A sample of another stage starts the history again: a new stage has its
own pace. The newest sample is always known (`latest`), kept or not.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CAP", "Pace", "PacePoint"]

CAP = 256
"""Points kept of the current stage (the history halves when it is full)."""


class PacePoint(NamedTuple):
    x: float
    """Seconds on the run's clock (the event's `sim_ts`, else its `ts`)."""
    step: int
    spend: float
    """Dollars spent by then (NaN when the sample's spend is not a number)."""


class Pace:
    """The current stage's (x, step, spend) points, oldest first, at most `cap`."""

    __slots__ = ("_cap", "_points", "_since", "_stride", "latest", "stage")

    def __init__(self, cap: int = CAP) -> None:
        if cap < 4:
            raise ValueError("a pace keeps at least 4 points")
        self._cap = cap
        self._points: list[PacePoint] = []
        self._stride = 1
        self._since = 0
        """Samples since the last kept one."""
        self.stage: str | None = None
        self.latest: PacePoint | None = None

    def add(self, stage: str, x: float, step: int, spend: float) -> None:
        """One sample; a sample of another stage restarts the history; x going back is
        clamped to the newest x (the clock stays ordered)."""
        if stage != self.stage:
            self.stage = stage
            self._points = []
            self._stride, self._since = 1, 0
            self.latest = None
        if self.latest is not None and x < self.latest.x:
            x = self.latest.x
        point = PacePoint(x, step, spend)
        self.latest = point
        self._since += 1
        if self._since < self._stride:
            return
        self._since = 0
        self._points.append(point)
        if len(self._points) > self._cap:
            # Keep the first and every other one: the span stays whole, the stride doubles.
            self._points = self._points[::2]
            self._stride *= 2

    def points(self) -> list[PacePoint]:
        """Kept points, oldest first, and the newest sample after them if not kept."""
        pts = list(self._points)
        if self.latest is not None and (not pts or pts[-1] is not self.latest):
            pts.append(self.latest)
        return pts

    def __len__(self) -> int:
        return len(self._points)
