"""The watcher when things go wrong: a silent run, a failing follower, a revoked token,
more runs than it follows. desk_sim behind `Tamper` (tests/faults) over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ito_tui.alerting import RunsWatcher
from ito_tui.client import AuthError
from ito_tui.desk_sim import create_app
from tests.faults.tamper import Tamper
from tests.support.servers import sim_config

from .live import BOOKINGS, connect, hang_pretrain, start_run, until
from .test_watcher import Recorder, watching


@pytest.fixture
def tampered(tmp_path: Path, serve_asgi: Callable[[Any], str]) -> Callable[..., tuple[str, Tamper]]:
    def start(**overrides: Any) -> tuple[str, Tamper]:
        tamper = Tamper(create_app(sim_config(tmp_path / "tampered.db", **overrides)))
        return serve_asgi(tamper), tamper

    return start


@pytest.mark.slow  # ~10 s: pretrain must last long enough to hang (see below)
async def test_a_run_that_stops_progressing_while_connected_is_silent_once(
    tampered: Callable[..., tuple[str, Tamper]],
) -> None:
    # Slow enough that pretrain's hang lasts what a spell needs besides its 10 simulated
    # minutes: 3 of the run's ticks and 2 local seconds (silence.py); at 2,000x pretrain
    # ends first.
    url, tamper = tampered(scenario="happy", speed=1000.0)
    tamper.event_hook(hang_pretrain(after=3))
    async with connect(url, "s3cret") as alice:
        run_id = await start_run(alice, BOOKINGS[0], "happy")
    async with watching(url, stall_after_s=600.0) as (_watcher, seen):
        await until(lambda: bool(seen.of("run_end")), what="the run's end")
    (silent,) = seen.of("silent")
    assert (silent.run_id, silent.stage) == (run_id, "pretrain")
    assert silent.summary == (
        f"{run_id}: no progress for 10m00s while the backend is connected; "
        "it has not reported a fault."
    )


@pytest.mark.slow  # 3-5 s against desk_sim: the full suite runs it
async def test_a_failing_follower_is_dropped_and_picked_up_at_the_next_poll(
    tampered: Callable[..., tuple[str, Tamper]],
) -> None:
    url, tamper = tampered(scenario="happy", speed=2000.0)
    async with connect(url, "s3cret") as alice:
        flaky = await start_run(alice, BOOKINGS[0], "happy")
        steady = await start_run(alice, BOOKINGS[1], "happy")
    # The flaky run's stream is refused twice (a 404 is final for a stream), then served.
    tamper.answer(rf"^/v1/runs/{flaky}/events$", lambda i: (404, {}) if i < 2 else None)
    async with watching(url) as (watcher, seen):
        await until(lambda: len(seen.of("run_end")) == 2, what="both ends", within=60)
        assert watcher.polls >= 3  # a poll per failure, then the one that followed it
    assert {a.run_id for a in seen.of("run_end")} == {flaky, steady}
    assert tamper.count(rf"/v1/runs/{flaky}/events") >= 3


async def test_a_revoked_token_stops_the_watcher(
    tampered: Callable[..., tuple[str, Tamper]],
) -> None:
    url, tamper = tampered(scenario="loss-spike", speed=1000.0, approval_speed=1.0)
    seen = Recorder()
    async with connect(url, "s3cret") as alice:
        await start_run(alice, BOOKINGS[0], "loss-spike")
        watcher = RunsWatcher(alice, on_alert=seen.alert, on_change=seen.change, poll_s=1.0)
        task = asyncio.create_task(watcher.run())
        await until(lambda: bool(watcher.following), what="a run followed")
        tamper.revoke()
        with pytest.raises(AuthError):
            await asyncio.wait_for(task, 20)
    assert not watcher.following


async def test_the_runs_setting_and_the_cap_choose_what_is_followed(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="loss-spike", speed=20_000.0, approval_speed=1.0)
    async with connect(sim.url, "s3cret") as alice:
        runs = [await start_run(alice, booking, "loss-spike") for booking in BOOKINGS[:3]]
        async with watching(sim.url, runs=[runs[2]]) as (watcher, seen):
            await until(lambda: watcher.polls >= 1 and bool(watcher.following), what="one run")
            assert watcher.following == (runs[2],)
            await until(lambda: bool(seen.needs.pending), what="its proposal")
            assert {p.run_id for p in seen.needs.pending} == {runs[2]}
        async with watching(sim.url, max_followed=2) as (watcher, seen):
            await until(lambda: len(seen.needs.pending) == 2, what="two followed runs' proposals")
            first = set(watcher.following)
            assert len(first) == 2
            # One of them decided and ended: the third run takes its place.
            done = seen.needs.pending[0]
            await alice.approve(done.proposal_id)
            await until(lambda: set(runs) - {done.run_id} <= set(watcher.following), what="refill")
            await until(lambda: len(seen.needs.pending) == 2, what="the third run's proposal")
            assert {p.run_id for p in seen.needs.pending} == set(runs) - {done.run_id}


@pytest.mark.slow  # 3-5 s against desk_sim: the full suite runs it
async def test_an_unreachable_runs_list_is_retried_at_most_once_a_second_then_followed(
    tampered: Callable[..., tuple[str, Tamper]],
) -> None:
    url, tamper = tampered(scenario="loss-spike", speed=1000.0, approval_speed=1.0)
    down = True
    tamper.answer(r"^/v1/runs$", lambda i: (503, {}) if down else None)
    async with connect(url, "s3cret") as alice:
        run_id = await start_run(alice, BOOKINGS[0], "loss-spike")
    async with watching(url) as (watcher, seen):
        loop = asyncio.get_running_loop()
        start = loop.time()
        await until(lambda: tamper.count(r"/v1/runs") >= 3, what="a first failed poll")
        await asyncio.sleep(3.0)
        # Each poll is the client's 3 attempts; polls never come faster than once a second
        # (after a failure they back off, jittered, from 1 s up to 5 minutes).
        polls_made = tamper.count(r"/v1/runs") / 3
        assert 1 <= polls_made <= 1 + (loop.time() - start), polls_made
        assert watcher.polls == 0 and not watcher.following
        down = False
        await until(lambda: run_id in watcher.following, what="followed once it answers")
        await until(lambda: bool(seen.needs.pending), what="its proposal")
