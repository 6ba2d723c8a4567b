"""The watcher sleeps until a poll or a silence check is due, not a second at a time: a
real desk_sim lists no runs; one run is lent and its events handed over as a screen does."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from ito_tui.alerting import NeedsYou, RunsWatcher
from ito_tui.contract import Run, make_event
from ito_tui.state import RunTracker
from tests.state.sequence import run_snapshot

from .live import connect, until
from .test_watcher import Recorder

T0 = datetime(2026, 12, 8, tzinfo=UTC)


async def test_the_watcher_wakes_for_a_poll_or_a_due_check_and_an_event_that_ends_a_spell(
    sim: Any,
) -> None:
    seen = Recorder()
    silent: list[frozenset[str]] = []  # every `NeedsYou.silent` published, in order

    def change(needs: NeedsYou) -> None:
        silent.append(needs.silent)
        seen.change(needs)

    async with connect(sim.url, "s3cret") as client:
        watcher = RunsWatcher(
            client, on_alert=seen.alert, on_change=change, poll_s=30.0, stall_after_s=1.0
        )
        task = asyncio.create_task(watcher.run())
        try:
            await until(lambda: watcher.polls == 1, what="a first poll")
            await asyncio.sleep(2.5)
            # Nothing due: one check at the poll, none a second since (three before).
            assert watcher.checks == 1
            tracker = RunTracker(Run.model_validate(run_snapshot("running")))
            run_id = tracker.run_id
            watcher.lend(run_id)

            def hand_over(type_: str, seq: int, data: dict[str, Any]) -> None:
                at = (T0 + timedelta(seconds=seq / 10)).isoformat()
                event = make_event(type_, seq=seq, run_id=run_id, ts=at, data=data)
                tracker.feed(event)
                watcher.observe(run_id, event, tracker.state)

            progress = {"stage": "pretrain", "progress": {"step": 1, "total_steps": 100}}
            hand_over("stage.started", 1, {"stage": "pretrain", "total_steps": 100})
            hand_over("stage.progress", 2, progress)
            clock = watcher.silence(run_id)
            assert clock is not None and clock.due() is not None
            # Due a local second after the progress (stall_after_s): checked then, at once.
            await until(lambda: seen.of("silent"), within=3.0, what="the silent alert")
            assert watcher.checks <= 3
            assert seen.needs.silent == frozenset({run_id})
            # Progress ends the spell, and the watcher says so without waiting for a poll
            # (a second later, no progress since, the next spell begins).
            published = len(silent)
            hand_over("stage.progress", 3, progress)
            ended = lambda: frozenset() in silent[published:]  # noqa: E731
            await until(ended, within=2.0, what="the spell's end")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
