"""A run lent to a screen is followed once: the watcher takes the screen's events for what
is pending and missed, raises none of their alerts itself, and follows it again after."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from ito_tui.client import ItoClient
from ito_tui.state import RunTracker

from .live import BOOKINGS, connect, start_run, until
from .test_watcher import watching


async def lender(client: ItoClient, run_id: str, hand_over: Callable[..., None]) -> None:
    """What a pipeline screen does: its own tracker on its own stream, each new event
    handed to the watcher."""
    run = await client.run(run_id)
    tracker = RunTracker(run)
    stream = client.events(run_id, since_seq=run.last_event_seq)
    try:
        async for event in stream:
            if tracker.feed(event):
                hand_over(run_id, event, tracker.state)
            if event.terminal:
                return
    finally:
        await stream.aclose()


@pytest.mark.slow  # 3-5 s against desk_sim: the full suite runs it
async def test_a_lent_run_is_followed_by_its_screen_only_then_by_the_watcher_again(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="loss-spike", speed=1000.0, approval_speed=1.0)
    async with watching(sim.url) as (watcher, seen), connect(sim.url, "s3cret") as alice:
        await until(lambda: watcher.polls >= 1, what="a first poll")
        run_id = await start_run(alice, BOOKINGS[0], "loss-spike")
        await until(lambda: run_id in watcher.following, what="the run followed")
        watcher.lend(run_id, await alice.run(run_id))
        await until(lambda: run_id not in watcher.following, what="its follower stopped")
        screen = asyncio.create_task(lender(alice, run_id, watcher.observe))
        try:
            await until(lambda: bool(seen.needs.pending), what="the proposal, from the screen")
            polls = watcher.polls
            await until(lambda: watcher.polls >= polls + 2, what="two more polls")
            assert run_id not in watcher.following  # one stream for the run: the screen's
            # Its events' alerts are the screen's to raise: none came from the watcher.
            assert seen.of("proposal") == [] and seen.needs.pending[0].run_id == run_id
            watcher.give_back(run_id)
            await until(lambda: run_id in watcher.following, 5, "followed again at once")
            (pending,) = seen.needs.pending  # still known: not lost with the loan
            assert pending.run_id == run_id and seen.needs.missed == ()
        finally:
            screen.cancel()
            await asyncio.gather(screen, return_exceptions=True)


@pytest.mark.slow  # 3-5 s against desk_sim: the full suite runs it
async def test_a_lent_runs_proposal_that_expires_unseen_is_missed(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="loss-spike", speed=2000.0, approval_speed=1.0, proposal_ttl_s=1.5)
    async with connect(sim.url, "s3cret") as alice:
        run_id = await start_run(alice, BOOKINGS[0], "loss-spike")
        async with watching(sim.url) as (watcher, seen):
            watcher.lend(run_id, await alice.run(run_id))
            screen = asyncio.create_task(lender(alice, run_id, watcher.observe))
            try:
                await until(lambda: bool(seen.needs.missed), what="the proposal to expire")
            finally:
                screen.cancel()
                await asyncio.gather(screen, return_exceptions=True)
            (missed,) = seen.needs.missed
            assert (missed.run_id, missed.label()) == (run_id, "expired unseen")
            assert [a.run_id for a in seen.of("proposal_missed")] == [run_id]
            assert run_id not in watcher.following and seen.of("proposal") == []
