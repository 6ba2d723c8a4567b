"""The run view's one repaint scheduler: coalesce changes, cap each panel's rate, skip hidden ones.

A screen registers its panels (a name, a `paint` callback, the least time between two of
its paints, and whether it is on display), then `mark`s the ones a change touched. Marks
coalesce: a panel marked ten times between two paints is painted once, with what the
state holds at paint time. Panels with the same interval share one timer, so a burst
costs one wake-up per interval, not one per panel. A panel that is not on display (a
hidden tab) stays dirty without being painted; `shown` paints it once it shows again.

The first change after a quiet interval is painted in the same wake-up that brought it
(`call_later`, not a timer): at 1 event/s every event is the first, and a second wake-up
0.1 s later per event cost more than the painting (bench #4). Changes within the
interval wait for its end.

No Textual import: the host is anything with `set_timer` and `call_later` (a Screen), so
the scheduler is tested with a fake clock and host, and the views after the run screen
(logs, fleet) reuse it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["CHART_INTERVAL_S", "TABLE_INTERVAL_S", "Host", "Repaints"]

CHART_INTERVAL_S = 0.1
"""Charts, lists and the run's progress repaint at most 10 times a second."""
TABLE_INTERVAL_S = 0.5
"""Tables (checkpoints, faults) repaint at most twice a second."""


class Host(Protocol):
    """What the scheduler needs of its screen (Textual's `MessagePump` has both)."""

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> Any: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...


def _always() -> bool:
    return True


@dataclass(slots=True)
class _Panel:
    paint: Callable[[], None]
    interval: float
    visible: Callable[[], bool]


@dataclass(slots=True)
class _Lane:
    """The panels sharing one interval: at most one paint of them is scheduled at a time."""

    names: list[str] = field(default_factory=list)
    armed: bool = False
    last: float = float("-inf")


class Repaints:
    """Coalesced, rate-capped repaints of a screen's panels (see the module docstring)."""

    def __init__(self, host: Host, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._host = host
        self._clock = clock
        self._panels: dict[str, _Panel] = {}
        self._lanes: dict[float, _Lane] = {}
        self._dirty: set[str] = set()

    def panel(
        self,
        name: str,
        paint: Callable[[], None],
        *,
        interval: float = CHART_INTERVAL_S,
        visible: Callable[[], bool] = _always,
    ) -> None:
        """Register `name`: `paint()` draws it from the current state, at most once per
        `interval` seconds, and only while `visible()`. Panels sharing an interval are
        painted in the order they were registered."""
        if name in self._panels:
            raise ValueError(f"panel {name!r} is registered already")
        self._panels[name] = _Panel(paint, interval, visible)
        self._lanes.setdefault(interval, _Lane()).names.append(name)

    @property
    def names(self) -> tuple[str, ...]:
        """The registered panels, in registration order."""
        return tuple(self._panels)

    def mark(self, *names: str) -> None:
        """Note that what `names` show changed; their paint is scheduled (coalesced)."""
        unknown = [n for n in names if n not in self._panels]
        if unknown:
            raise KeyError(f"no such panel: {', '.join(unknown)}")
        self._dirty.update(names)
        # A hidden panel stays dirty without a wake-up: `shown` schedules it.
        panels = self._panels
        self._schedule(panels[n].interval for n in names if panels[n].visible())

    def mark_all(self) -> None:
        """Everything changed (a seed, a rebase): every panel is painted once more."""
        self.mark(*self._panels)

    def shown(self) -> None:
        """A panel may be on display again (a tab switch, back from another screen):
        paint the dirty ones that show now."""
        self._schedule(self._panels[n].interval for n in self._dirty if self._panels[n].visible())

    @property
    def pending(self) -> bool:
        """True while a paint is scheduled, or a panel on display waits for one."""
        if any(lane.armed for lane in self._lanes.values()):
            return True
        return any(self._panels[n].visible() for n in self._dirty)

    @property
    def hidden(self) -> frozenset[str]:
        """The dirty panels that are not on display (painted by `shown` once they are)."""
        return frozenset(n for n in self._dirty if not self._panels[n].visible())

    def _schedule(self, intervals: Iterable[float]) -> None:
        for interval in set(intervals):
            lane = self._lanes[interval]
            if lane.armed:
                continue
            lane.armed = True
            wait = interval - (self._clock() - lane.last)

            def flush(interval: float = interval) -> None:
                self._flush(interval)

            def flush_later(flush: Callable[[], None] = flush) -> None:
                # A timer still fires while its screen is being removed (one set by a
                # worker's event after the removal began), when the widgets are pruned
                # already: painting them raised. `call_later` refuses a closing screen.
                self._host.call_later(flush)

            if wait > 0:
                self._host.set_timer(wait, flush_later)
            else:
                # Leading edge: painted in this wake-up, after the handler that marked it.
                self._host.call_later(flush)

    def _flush(self, interval: float) -> None:
        lane = self._lanes[interval]
        lane.armed = False
        lane.last = self._clock()
        for name in lane.names:
            if name not in self._dirty:
                continue
            panel = self._panels[name]
            if not panel.visible():
                continue  # stays dirty: `shown` paints it when it shows again
            self._dirty.discard(name)
            panel.paint()
