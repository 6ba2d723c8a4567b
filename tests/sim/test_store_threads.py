"""desk_sim's SQLite connection is used from the server's event-loop thread only, also under
many concurrent readers (and a writer) while a run ticks fast."""

from __future__ import annotations

import inspect
import json
import logging
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from ito_tui.contract import Page, Run, RunSummary, TelemetryPage
from ito_tui.desk_sim import routes_desk, routes_runs, sse
from ito_tui.desk_sim.store import Store
from tests.support.servers import SimHandle

from .helpers import create_run, read_events, seqs

READERS = 6
WRITERS = 3
ROUNDS = 30
"""Requests of each kind per client: 6 readers x 30 rounds x 6 kinds = 1,080 GETs, and
3 writers x 30 = 90 injections. On the thread-pool routes with the connection shared
across threads (before), 1 to 13 of the 90 injections failed in each of four runs with
"cannot start a transaction within a transaction"."""


class Reader:
    """One client reading the run over and over; `problems` lists what was wrong."""

    def __init__(self, sim: SimHandle, run_id: str) -> None:
        self.client = httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=30)
        self.run_id = run_id
        self.problems: list[str] = []
        self.last_event_seq = 0
        self.since = 0

    def get(self, path: str, **params: int) -> str | None:
        """The body of a 200 answer, else None (and the answer noted as a problem)."""
        answer = self.client.get(path, params=params)
        if answer.status_code != 200:
            self.problems.append(f"GET {path}: {answer.status_code} {answer.text[:200]}")
            return None
        return answer.text

    def runs(self) -> None:
        body = self.get("/v1/runs")
        if body is not None:
            ids = {r.run_id for r in Page[RunSummary].model_validate_json(body).items}
            if self.run_id not in ids:
                self.problems.append(f"the runs list misses {self.run_id}")

    def run(self) -> None:
        body = self.get(f"/v1/runs/{self.run_id}")
        if body is not None:
            seq = Run.model_validate_json(body).last_event_seq
            if seq < self.last_event_seq:
                self.problems.append(f"last_event_seq went back {self.last_event_seq} -> {seq}")
            self.last_event_seq = seq

    def telemetry(self) -> None:
        body = self.get(f"/v1/runs/{self.run_id}/telemetry", since_seq=self.since)
        if body is not None:
            got = [s.seq for s in TelemetryPage.model_validate_json(body).items]
            if got != sorted(set(got)) or (got and got[0] <= self.since):
                self.problems.append(f"telemetry after seq {self.since}: {got[:5]}")
            self.since = got[-1] if got else self.since

    def replay(self) -> None:
        status, events = read_events(
            self.client, self.run_id, params={"since_seq": 0}, stop_after=40
        )
        if status != 200 or not events or seqs(events) != list(range(1, len(events) + 1)):
            self.problems.append(f"events replay: {status} {seqs(events)[:5]}")

    def lists(self) -> None:
        for what in ("checkpoints", "proposals"):
            body = self.get(f"/v1/runs/{self.run_id}/{what}")
            if body is not None and not isinstance(json.loads(body), list):
                self.problems.append(f"{what}: {body[:200]}")

    def __call__(self) -> list[str]:
        with self.client:
            for _ in range(ROUNDS):
                self.runs()
                self.run()
                self.telemetry()
                self.replay()
                self.lists()
        return self.problems


def injector(sim: SimHandle, run_id: str) -> list[str]:
    """A writer on another route: slow checkpoints injected while the run ticks."""
    problems = []
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=30) as client:
        for _ in range(ROUNDS):
            answer = client.post(f"/v1/sim/runs/{run_id}/inject", json={"kind": "slow_checkpoint"})
            if answer.status_code not in (202, 409):  # 409: the run already ended
                problems.append(f"inject: {answer.status_code} {answer.text[:200]}")
    return problems


def test_concurrent_readers_and_a_writer_during_fast_ticks_all_get_consistent_answers(
    sim_factory: Callable[..., SimHandle], caplog: pytest.LogCaptureFixture
) -> None:
    # About 10 s of simulated pipeline, a tick every 2 ms: the loop writes all the time.
    sim = sim_factory(speed=100_000.0, tick_s=0.002)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=30) as client:
        run_id = create_run(client)["run_id"]
    caplog.set_level(logging.ERROR, logger="ito_tui.desk_sim")
    with ThreadPoolExecutor(READERS + WRITERS) as pool:
        jobs = [pool.submit(Reader(sim, run_id)) for _ in range(READERS)]
        jobs += [pool.submit(injector, sim, run_id) for _ in range(WRITERS)]
        problems = [p for job in jobs for p in job.result()]
    assert problems == []
    # The server logs every request that raised (e.g. SQLite refusing a foreign thread).
    assert [r.getMessage() for r in caplog.records] == []
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=30) as client:
        assert client.get(f"/v1/runs/{run_id}").json()["state"] != "failed"


def on_the_loop(call: Callable[..., Any]) -> bool:
    """Whether FastAPI awaits `call` on the event loop (rather than in its thread pool)."""
    method = call if inspect.isroutine(call) else type(call).__call__
    return inspect.iscoroutinefunction(method)


def calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    if dependant.call is not None:
        yield dependant.call
    for sub in dependant.dependencies:
        yield from calls(sub)


def test_every_route_and_dependency_runs_on_the_event_loop() -> None:
    routes = [r for m in (routes_desk, routes_runs, sse) for r in m.router.routes]
    assert all(isinstance(r, APIRoute) for r in routes) and len(routes) >= 16
    in_pool = {
        f"{route.path}: {getattr(call, '__name__', call)}"
        for route in routes
        if isinstance(route, APIRoute)
        for call in calls(route.dependant)
        if not on_the_loop(call)
    }
    assert sorted(in_pool) == []


def test_the_store_refuses_to_be_used_from_another_thread(tmp_path: Path) -> None:
    store = Store(tmp_path / "desk.db")
    with ThreadPoolExecutor(1) as pool:
        elsewhere = pool.submit(store.list_runs, state=None, booking_id=None, after=None, limit=1)
        with pytest.raises(sqlite3.ProgrammingError, match="same thread"):
            elsewhere.result()
    assert store.list_runs(state=None, booking_id=None, after=None, limit=1) == []
    store.close()
