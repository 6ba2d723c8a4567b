"""The running desk: store, seeded bookings, live engines, the tick loop and watchers.

All of it lives on the server's event loop; engine calls and SQLite writes are
synchronous, so no two of them ever interleave. Each change to a run is
committed in one transaction (events + telemetry + checkpoints + proposals +
engine state + snapshot) and only then are that run's watchers woken.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from datetime import datetime

from ito_tui.contract import Booking, event_to_json, now_utc

from .catalog import seed_bookings
from .config import SimConfig
from .engine import Engine
from .joblog_store import JobLog
from .store import RunRow, Store

log = logging.getLogger("ito_tui.desk_sim")

SNAPSHOT_EVERY_S = 1.0
"""Wall seconds between snapshot-only commits of a run that produced no event."""


class Desk:
    """Shared state of one simulated backend process."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.store = Store(config.db_path)
        self.joblog = JobLog(
            self.store.conn, line_bytes=config.log_line_bytes, retention=config.log_retention
        )
        seeded = self.store.meta("seeded_at")
        if seeded is None:
            seeded = now_utc().isoformat()
            self.store.set_meta("seeded_at", seeded)
        self._bookings = {b.booking_id: b for b in seed_bookings(datetime.fromisoformat(seeded))}
        self.engines: dict[str, Engine] = {}
        self._last_wall: dict[str, float] = {}
        self._last_commit: dict[str, float] = {}
        self._versions: dict[str, int] = {}
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        now = time.monotonic()
        for row in self.store.active_runs():
            self.engines[row.run_id] = Engine.from_state(json.loads(row.engine))
            self._last_wall[row.run_id] = now
        self._task = asyncio.create_task(self._loop(), name="desk-sim-ticks")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.store.close()

    async def _loop(self) -> None:
        while True:
            self.tick()
            await asyncio.sleep(self.config.tick_s)

    def tick(self) -> None:
        """Advance every live run to its current simulated time and commit what happened."""
        wall = time.monotonic()
        now = now_utc()
        for run_id, engine in list(self.engines.items()):
            dt = wall - self._last_wall.get(run_id, wall)
            self._last_wall[run_id] = wall
            try:
                engine.advance(float(engine.s["clock"]) + dt * engine.speed(), now)
                stale = wall - self._last_commit.get(run_id, 0.0) >= SNAPSHOT_EVERY_S
                # A log-flood run commits every tick: its lines come at the wall rate.
                if engine.out or engine.done or stale or self.joblog.flooding(run_id):
                    self.commit(engine)
            except Exception:
                # One broken run must not stop the others: end it visibly instead.
                log.exception("simulator error in %s; failing the run", run_id)
                self._fail_fatal(run_id)

    def _fail_fatal(self, run_id: str) -> None:
        """End a run whose simulation raised: `run.failed` (fatal) from its last commit."""
        self.engines.pop(run_id, None)
        row = self.store.run(run_id)
        if row is None or row.terminal:
            return
        engine = Engine.from_state(json.loads(row.engine))
        engine.now = now_utc()
        engine.finish_failed("fatal", "internal simulator error; the run was stopped")
        self.commit(engine)

    # ------------------------------------------------------------ bookings

    def bookings(self) -> list[Booking]:
        active = self.store.active_run_by_booking()
        return [
            b.model_copy(update={"active_run_id": active.get(b.booking_id)})
            for b in self._bookings.values()
        ]

    def booking(self, booking_id: str) -> Booking | None:
        found = self._bookings.get(booking_id)
        if found is None:
            return None
        active = self.store.active_run_by_booking().get(booking_id)
        return found.model_copy(update={"active_run_id": active})

    # ------------------------------------------------------------ runs

    def add(self, engine: Engine, operator: str, *, also: Callable[[], None] | None = None) -> None:
        """Commit a new run and start ticking it."""
        run_id = engine.run["run_id"]
        self.engines[run_id] = engine
        self._last_wall[run_id] = time.monotonic()
        self.commit(engine, operator=operator, also=also)

    def engine(self, run_id: str) -> Engine | None:
        """The live engine of an active run, or a detached one rebuilt from the store."""
        live = self.engines.get(run_id)
        if live is not None:
            return live
        row = self.store.run(run_id)
        return None if row is None else Engine.from_state(json.loads(row.engine))

    def snapshot(self, run_id: str) -> str | None:
        live = self.engines.get(run_id)
        if live is not None:
            return json.dumps(live.run)
        row = self.store.run(run_id)
        return None if row is None else row.snapshot

    def commit(
        self,
        engine: Engine,
        *,
        operator: str | None = None,
        also: Callable[[], None] | None = None,
    ) -> None:
        """Write everything the engine produced, its state and its snapshot, atomically.

        `also` runs inside the same transaction (the Idempotency-Key's stored response).
        """
        events, telemetry, checkpoints, proposals = engine.drain()
        run = engine.run
        run_id = run["run_id"]
        row = RunRow(
            run_id=run_id,
            booking_id=run["booking_id"],
            operator=operator or str(run.get("operator") or ""),
            state=str(run["state"]),
            terminal=engine.done,
            last_seq=int(run["last_event_seq"]),
            snapshot=json.dumps(run),
            engine=json.dumps(engine.to_state()),
        )
        with self.store.tx():
            self.store.add_events(
                run_id,
                [(e.seq, e.type, event_to_json(e)) for e in events],
                self.config.event_retention,
            )
            self.store.add_telemetry(run_id, telemetry)
            logged = self.joblog.record(engine.to_state(), events)
            for checkpoint_id, body in checkpoints:
                self.store.add_checkpoint(run_id, checkpoint_id, body)
            for p in proposals:
                self.store.save_proposal(
                    p["proposal_id"],
                    run_id,
                    p["status"],
                    p["created_at"],
                    json.dumps(p),
                    p.get("decided_by"),
                )
            self.store.save_run(row, run["created_at"])
            if also is not None:
                also()
        self._last_commit[run_id] = time.monotonic()
        if engine.done:
            self.engines.pop(run_id, None)
            self._last_wall.pop(run_id, None)
            self._last_commit.pop(run_id, None)
        if events or logged or engine.done:
            self._wake(run_id)

    # ------------------------------------------------------------ watchers

    def version(self, run_id: str) -> int:
        return self._versions.get(run_id, 0)

    def _wake(self, run_id: str) -> None:
        self._versions[run_id] = self.version(run_id) + 1
        for waiter in self._waiters.pop(run_id, set()):
            waiter.set()

    async def wait(self, run_id: str, version: int, max_wait_s: float) -> None:
        """Return when the run has new events past `version`, or after `max_wait_s`."""
        if self.version(run_id) != version:
            return
        waiter = asyncio.Event()
        self._waiters.setdefault(run_id, set()).add(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max_wait_s):
                    await waiter.wait()
        finally:
            self._waiters.get(run_id, set()).discard(waiter)
