"""The runs watcher against a real desk_sim over HTTP: every run's alerts, exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from ito_tui.alerting import Alert, NeedsYou, RunsWatcher

from .live import BOOKINGS, connect, start_run, until


class Recorder:
    """What a watcher handed out."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []
        self.needs = NeedsYou()
        self.on_proposal: Callable[[Alert], None] | None = None

    def alert(self, alert: Alert) -> None:
        self.alerts.append(alert)
        if alert.kind == "proposal" and self.on_proposal is not None:
            self.on_proposal(alert)

    def change(self, needs: NeedsYou) -> None:
        self.needs = needs

    def of(self, kind: str) -> list[Alert]:
        return [a for a in self.alerts if a.kind == kind]


@asynccontextmanager
async def watching(url: str, **options: Any) -> AsyncIterator[tuple[RunsWatcher, Recorder]]:
    """A watcher (alice's token) running in the background for the block."""
    seen = Recorder()
    async with connect(url, "s3cret") as client:
        watcher = RunsWatcher(
            client, on_alert=seen.alert, on_change=seen.change, poll_s=1.0, **options
        )
        task = asyncio.create_task(watcher.run())
        try:
            yield watcher, seen
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert not watcher.following  # every follower stopped with it


@pytest.mark.slow  # 3-5 s against desk_sim: the full suite runs it
async def test_two_runs_alert_once_each_and_a_decision_by_bob_is_missed(
    sim_factory: Callable[..., Any],
) -> None:
    # Slow enough that runs created after the watcher started are followed before their
    # loss spike escalates; the proposal then waits at a person's pace.
    sim = sim_factory(scenario="loss-spike", speed=1000.0, approval_speed=1.0)
    async with (
        watching(sim.url) as (watcher, seen),
        connect(sim.url, "s3cret") as alice,
        connect(sim.url, "hunter2") as bob,
    ):
        await until(lambda: watcher.polls >= 1, what="a first poll")
        runs = [await start_run(alice, booking, "loss-spike") for booking in BOOKINGS[:2]]
        await until(lambda: len(seen.needs.pending) == 2, what="both proposals pending")
        proposals = seen.of("proposal")
        assert sorted(a.run_id for a in proposals) == sorted(runs)
        assert {p.run_id for p in seen.needs.pending} == set(runs)
        by_run = {p.run_id: p for p in seen.needs.pending}
        assert {a.proposal_id for a in proposals} == {p.proposal_id for p in by_run.values()}

        await alice.approve(by_run[runs[0]].proposal_id, comment="rolling back")
        await bob.reject(by_run[runs[1]].proposal_id, comment="let it run")
        await until(lambda: not seen.needs.pending, what="both decided")
        await until(lambda: bool(seen.of("proposal_missed")), what="bob's decision missed")
        (missed,) = seen.needs.missed  # alice's own approval is not missed
        assert (missed.run_id, missed.outcome, missed.by) == (runs[1], "decided", "bob")
        assert missed.label() == "decided by bob"
        (notice,) = seen.of("proposal_missed")
        assert notice.run_id == runs[1] and notice.summary.endswith("was rejected by bob.")
        assert len(seen.of("proposal")) == 2  # exactly once each
        keys = [a.key() for a in seen.alerts]
        assert len(keys) == len(set(keys)), keys


@pytest.mark.slow  # 3-5 s against desk_sim: the full suite runs it
async def test_a_proposal_that_expires_unseen_is_missed(sim_factory: Callable[..., Any]) -> None:
    # Proposals expire 1.5 simulated seconds after they are made, at a person's pace; the
    # runs start before the watcher, whose first poll follows them long before that.
    sim = sim_factory(scenario="loss-spike", speed=2000.0, approval_speed=1.0, proposal_ttl_s=1.5)
    async with connect(sim.url, "s3cret") as alice:
        runs = [await start_run(alice, booking, "loss-spike") for booking in BOOKINGS[:2]]
    async with watching(sim.url) as (watcher, seen):
        looked_at = runs[0]
        # The operator opens run A's proposal as soon as it arrives; run B's nobody opens.
        seen.on_proposal = lambda a: (
            watcher.mark_seen(a.proposal_id or "") if (a.run_id == looked_at) else None
        )
        await until(lambda: len(seen.needs.missed) == 2, what="both proposals expired")
        labels = {m.run_id: m.label() for m in seen.needs.missed}
        assert labels == {runs[0]: "expired", runs[1]: "expired unseen"}
        assert all(m.outcome == "expired" and m.by is None for m in seen.needs.missed)
        assert not seen.needs.pending
        notices = {a.run_id: a for a in seen.of("proposal_missed")}
        assert "expired unseen (rejected on expiry)" in notices[runs[1]].summary
        assert seen.needs.missed_for(runs[1])[0].proposal_id == notices[runs[1]].proposal_id


async def test_history_raises_no_alert_but_a_waiting_proposal_is_pending(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="loss-spike", speed=20_000.0, approval_speed=1.0)
    async with connect(sim.url, "s3cret") as alice:
        run_id = await start_run(alice, BOOKINGS[0], "loss-spike")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not (run := await alice.run(run_id)).pending_proposal_ids:
            assert loop.time() < deadline, f"no proposal: the run is {run.state}"
            await asyncio.sleep(0.05)
        (waiting,) = run.pending_proposal_ids
        async with watching(sim.url) as (watcher, seen):
            await until(lambda: bool(seen.needs.pending), what="the waiting proposal")
            assert seen.needs.most_urgent() is not None
            assert seen.needs.most_urgent().proposal_id == waiting  # type: ignore[union-attr]
            await until(lambda: run_id in watcher.following, what="the run followed")
            await alice.approve(waiting)  # by alice, the watcher's operator: not missed
            await until(lambda: bool(seen.of("run_end")), what="the run's end")
            assert not seen.needs.pending and not seen.needs.missed
            # Only what happened after the watcher attached: the end, nothing replayed.
            assert [a.kind for a in seen.alerts] == ["run_end"]
