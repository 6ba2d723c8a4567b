"""Refreshing a run's fleet for the Nodes tab (API.md v1.1 `runs.fleet`).

`FleetRefresh` fetches `GET /v1/runs/{id}/fleet` when the tab is shown and again while it
stays shown, at most every `limits.fleet_refresh_s`; the next request is armed only after
the last one finished, so requests never overlap, and a hidden tab costs nothing (the
timer is stopped; an answer in flight is still taken). A fleet event on the run stream
(`poke`, kind "fleet") asks for an earlier refresh: as soon as the limit allows, counted
from when the last request *started* rather than from when it finished.

`RefreshPlan` is the arithmetic (pure, tested on its own clock); `FleetRefresh` runs it
with the host widget's timer and workers and hands what it got to the host (`FleetSink`).
It draws nothing; the host (the `NodesPane`) reads nothing from the network.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ito_tui.client.errors import CapabilityMissing, ItoError

if TYPE_CHECKING:
    from ito_tui.client.protocol import ItoApi
    from ito_tui.contract import Fleet

__all__ = [
    "CAPABILITY",
    "MAX_BACKOFF_S",
    "FleetRefresh",
    "FleetSink",
    "RefreshHost",
    "RefreshPlan",
]

CAPABILITY = "runs.fleet"
MIN_DELAY_S = 0.01
MAX_BACKOFF_S = 60.0
"""After failures the wait doubles up to this (an unreachable fleet endpoint is not
asked every five seconds for hours)."""


class _Stoppable(Protocol):
    def stop(self) -> None: ...


class RefreshHost(Protocol):
    """What `FleetRefresh` needs of its widget: a timer and a worker (Textual's)."""

    @property
    def is_attached(self) -> bool: ...

    def set_timer(
        self, delay: float, callback: Callable[[], None], *, name: str | None = None
    ) -> _Stoppable: ...

    def run_worker(
        self, work: Coroutine[Any, Any, None], *, group: str, exit_on_error: bool
    ) -> object: ...


class FleetSink(Protocol):
    """What `FleetRefresh` tells the widget it refreshes for."""

    def fleet_fetched(self, fleet: Fleet) -> None:
        """A fresh snapshot."""

    def fleet_failed(self, error: ItoError, retry_in_s: float) -> None:
        """A refresh failed; the last snapshot stays; another is tried in `retry_in_s`."""

    def fleet_missing(self, detail: str) -> None:
        """The backend does not offer `runs.fleet`: nothing more is asked."""


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


@dataclass
class RefreshPlan:
    """When the next request may start (times on one monotonic clock, in seconds)."""

    interval_s: float
    started: float | None = None
    """When the last request started (None: never)."""
    finished: float | None = None
    """When the last request finished."""
    busy: bool = False
    failures: int = 0

    def start(self, now: float) -> None:
        self.busy, self.started = True, now

    def finish(self, now: float, *, ok: bool) -> float:
        """The request that started last finished; the delay until the regular next one
        (the interval after this finish; after failures, a backoff doubling up to
        `MAX_BACKOFF_S`)."""
        self.busy, self.finished = False, now
        self.failures = 0 if ok else self.failures + 1
        return self.wait_s()

    def wait_s(self) -> float:
        if not self.failures:
            return self.interval_s
        # At least a second after a failure, whatever the limit says (a limit of 0 must not
        # make a failing endpoint spin).
        base = max(1.0, self.interval_s)
        return min(MAX_BACKOFF_S, base * 2.0 ** (self.failures - 1))

    def due_in(self, now: float) -> float:
        """Seconds from `now` until a request may start (0: now): never sooner than the
        interval after the last start. After a failure, the backoff after the finish."""
        if self.started is None:
            return 0.0
        due = self.started + self.interval_s
        if self.failures and self.finished is not None:
            due = max(due, self.finished + self.wait_s())
        return max(0.0, due - now)


class FleetRefresh:
    """The fleet of `run_id`, fetched for `host` while it is shown (see the module doc)."""

    def __init__(
        self,
        client: ItoApi,
        run_id: str,
        host: RefreshHost,
        sink: FleetSink,
        *,
        interval_s: float,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self._now = clock or _loop_time
        self.run_id = run_id
        self.host = host
        self.sink = sink
        self.plan = RefreshPlan(max(0.0, interval_s))
        self.shown = False
        self.stopped = False
        """The capability is missing: nothing more is asked."""
        self.requests = 0
        """Requests started (for tests and the bench)."""
        self._timer: _Stoppable | None = None
        self._due: float | None = None
        """When the armed timer fires (loop time)."""
        self._poked = False
        """A fleet event came while a request was in flight."""

    def show(self) -> None:
        """The tab is on screen: fetch now, or as soon as the limit allows."""
        self.shown = True
        self._arm(self.plan.due_in(self._now()))

    def hide(self) -> None:
        """The tab is off screen: no request is armed until it shows again."""
        self.shown = False
        self._cancel()

    def poke(self) -> None:
        """A fleet event: refresh as soon as the limit allows (only while shown)."""
        if not self.shown:
            return
        if self.plan.busy:
            self._poked = True
        else:
            self._arm(self.plan.due_in(self._now()))

    def _arm(self, delay: float) -> None:
        if self.stopped or self.plan.busy:
            return  # the request in flight arms the next one when it finishes
        due = self._now() + delay
        if self._timer is not None and self._due is not None and self._due <= due:
            return  # one is armed already, at least as early
        self._cancel()
        self._due = due
        # Textual's timer divides by its delay: "at once" is the next few milliseconds.
        delay = max(MIN_DELAY_S, delay)
        self._timer = self.host.set_timer(delay, self._fire, name="fleet-refresh")

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer, self._due = None, None

    def _fire(self) -> None:
        self._timer, self._due = None, None
        if not self.shown or self.stopped or self.plan.busy:
            return
        self.plan.start(self._now())
        self.requests += 1
        self.host.run_worker(self._fetch(), group="fleet-refresh", exit_on_error=False)

    async def _fetch(self) -> None:
        ok = False
        error: ItoError | None = None
        try:
            fleet = await self.client.fleet(self.run_id)
        except CapabilityMissing as exc:
            self.stopped = True
            self.plan.busy = False
            self.sink.fleet_missing(str(exc))
            return
        except ItoError as exc:
            error = exc
        else:
            ok = True
            self.sink.fleet_fetched(fleet)
        finally:
            if self.plan.busy:
                wait = self.plan.finish(self._now(), ok=ok)
                if error is not None:
                    self.sink.fleet_failed(error, wait)
                if self._poked and not self.plan.failures:
                    wait = self.plan.due_in(self._now())
                self._poked = False
                if self.shown and not self.stopped and self.host.is_attached:
                    # Armed only now that this request finished: requests never overlap.
                    self._arm(wait)
