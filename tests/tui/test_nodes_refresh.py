"""The Nodes tab's refresh loop (`tui/run_fleet.py`): fetched when shown, at most every
`limits.fleet_refresh_s` while shown, the next request armed only after the last one
finished, nothing while hidden, a fleet event asking for an earlier refresh, and a backend
without `runs.fleet` asked nothing more.

The loop runs on a stand-in host (a timer list and tasks) and a stepped clock, so what is
checked is when each request may start, not how long anything took.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import pytest

from ito_tui.client import ItoError
from ito_tui.contract import Fleet
from ito_tui.tui.run_fleet import MAX_BACKOFF_S, MIN_DELAY_S, FleetRefresh, RefreshPlan
from tests.support.caps import capabilities
from tests.support.fakes import FakeClient

from .nodes_fakes import fleet
from .pipeline_fakes import run_snapshot

INTERVAL = 5.0


@dataclass
class Timer:
    delay: float
    callback: Callable[[], None]
    stopped: bool = False

    def stop(self) -> None:
        self.stopped = True


@dataclass
class Host:
    """A widget's timers and workers, stepped by hand."""

    timers: list[Timer] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    is_attached: bool = True

    def set_timer(
        self, delay: float, callback: Callable[[], None], *, name: str | None = None
    ) -> Timer:
        timer = Timer(delay, callback)
        self.timers.append(timer)
        return timer

    def run_worker(
        self, work: Coroutine[Any, Any, None], *, group: str, exit_on_error: bool
    ) -> object:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.append(task)
        return task

    def armed(self) -> list[Timer]:
        return [t for t in self.timers if not t.stopped]

    async def fire(self) -> None:
        """Fire the one armed timer and let the request it starts finish."""
        (timer,) = self.armed()
        timer.stopped = True
        timer.callback()
        await asyncio.gather(*self.tasks)


@dataclass
class Sink:
    fetched: list[Fleet] = field(default_factory=list)
    failed: list[tuple[str, float]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def fleet_fetched(self, fleet: Fleet) -> None:
        self.fetched.append(fleet)

    def fleet_failed(self, error: ItoError, retry_in_s: float) -> None:
        self.failed.append((str(error), retry_in_s))

    def fleet_missing(self, detail: str) -> None:
        self.missing.append(detail)


class GatedClient(FakeClient):
    """`fleet` waits for the test to let each answer go, and counts how many are open."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(run_model=run_snapshot(), fleet_model=fleet(), **kw)
        self.gate = asyncio.Event()
        self.open = 0
        self.most_open = 0

    async def fleet(self, run_id: str) -> Fleet:
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            await self.gate.wait()
            return await super().fleet(run_id)
        finally:
            self.open -= 1


def loop(client: FakeClient, clock: list[float]) -> tuple[FleetRefresh, Host, Sink]:
    host, sink = Host(), Sink()
    refresh = FleetRefresh(
        client, "run_7f3a9c", host, sink, interval_s=INTERVAL, clock=lambda: clock[0]
    )
    return refresh, host, sink


def test_the_plan_never_starts_sooner_than_the_limit_after_the_last_start() -> None:
    plan = RefreshPlan(INTERVAL)
    assert plan.due_in(100.0) == 0.0  # never fetched: at once
    plan.start(100.0)
    assert plan.due_in(101.0) == pytest.approx(4.0)
    # A slow answer: the regular next one is the limit after it finished, but asked for
    # (a fleet event) it may start the limit after the last one started.
    assert plan.finish(104.0, ok=True) == INTERVAL
    assert plan.due_in(104.0) == pytest.approx(1.0)
    assert plan.due_in(200.0) == 0.0


def test_failures_back_off_up_to_a_bound_and_a_success_resets() -> None:
    plan = RefreshPlan(INTERVAL)
    waits = []
    for t in range(8):
        plan.start(float(t))
        waits.append(plan.finish(float(t), ok=False))
    assert waits == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0, 60.0, 60.0]
    assert max(waits) == MAX_BACKOFF_S
    plan.start(9.0)
    assert plan.finish(9.0, ok=True) == INTERVAL


async def test_shown_fetches_at_once_then_every_interval_after_the_last_finished() -> None:
    client, clock = GatedClient(), [0.0]
    refresh, host, sink = loop(client, clock)
    refresh.show()
    assert [t.delay for t in host.armed()] == [MIN_DELAY_S]
    client.gate.set()
    await host.fire()
    assert len(sink.fetched) == 1 and client.fleet_reads == ["run_7f3a9c"]
    assert [t.delay for t in host.armed()] == [INTERVAL]  # armed after it finished
    for _ in range(3):
        await host.fire()
    assert len(client.fleet_reads) == 4
    assert client.most_open == 1


async def test_no_request_is_armed_while_one_is_in_flight_whatever_the_events() -> None:
    client, clock = GatedClient(), [0.0]
    refresh, host, _ = loop(client, clock)
    refresh.show()
    (timer,) = host.armed()
    timer.stopped = True
    timer.callback()
    await asyncio.sleep(0)
    assert client.open == 1
    for _ in range(10):  # a burst of node events while the answer is slow
        clock[0] += 1.0
        refresh.poke()
        refresh.show()
    assert host.armed() == []
    assert client.most_open == 1
    client.gate.set()
    await asyncio.gather(*host.tasks)
    # The events asked for an earlier one: the limit after the last *start* (long past).
    assert [t.delay for t in host.armed()] == [MIN_DELAY_S]
    assert refresh.requests == 1


async def test_hidden_arms_nothing_and_shown_again_fetches_when_the_limit_allows() -> None:
    client, clock = GatedClient(), [0.0]
    client.gate.set()
    refresh, host, _ = loop(client, clock)
    refresh.show()
    await host.fire()
    refresh.hide()
    assert host.armed() == []
    refresh.poke()  # a fleet event while hidden asks nothing
    assert host.armed() == []
    clock[0] = 2.0
    refresh.show()  # back within the limit: the next one waits for it
    assert [t.delay for t in host.armed()] == [pytest.approx(3.0)]
    refresh.hide()
    clock[0] = 60.0
    refresh.show()  # long after: at once
    assert [t.delay for t in host.armed()] == [MIN_DELAY_S]


async def test_a_fleet_event_brings_the_next_refresh_forward() -> None:
    client, clock = GatedClient(), [0.0]
    refresh, host, _ = loop(client, clock)
    refresh.show()
    (timer,) = host.armed()
    timer.stopped = True
    timer.callback()  # starts at 0.0 ...
    await asyncio.sleep(0)
    clock[0] = 3.0  # ... and is answered at 3.0: the regular next one at 8.0
    client.gate.set()
    await asyncio.gather(*host.tasks)
    assert [t.delay for t in host.armed()] == [INTERVAL]
    clock[0] = 4.0
    refresh.poke()  # a node failed: 5 s after the last start, at 5.0
    assert [t.delay for t in host.armed()] == [pytest.approx(1.0)]


async def test_a_failed_refresh_keeps_the_last_snapshot_and_backs_off() -> None:
    client, clock = GatedClient(), [0.0]
    client.gate.set()
    refresh, host, sink = loop(client, clock)
    refresh.show()
    await host.fire()
    client.fail_with = ItoError("fleet endpoint answered 502")
    await host.fire()
    await host.fire()
    assert len(sink.fetched) == 1
    assert [wait for _, wait in sink.failed] == [5.0, 10.0]
    assert [t.delay for t in host.armed()] == [10.0]
    client.fail_with = None
    await host.fire()
    assert len(sink.fetched) == 2 and [t.delay for t in host.armed()] == [INTERVAL]


async def test_without_the_capability_nothing_more_is_asked() -> None:
    client = FakeClient(
        caps=capabilities(missing=["runs.fleet"]), run_model=run_snapshot(), fleet_model=fleet()
    )
    refresh, host, sink = loop(client, [0.0])
    refresh.show()
    await host.fire()
    assert len(sink.missing) == 1 and sink.fetched == []
    assert host.armed() == []
    refresh.show()
    refresh.poke()
    assert host.armed() == [] and refresh.requests == 1
