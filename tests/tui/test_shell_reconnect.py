"""Ctrl+L reconnects in place, against a real desk_sim on 127.0.0.1: the operator stays on
the screen they were on, and that screen follows (or fetches) again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.worker import Worker, WorkerState

from ito_tui.client import BackendUnavailable
from ito_tui.tui import make_app
from ito_tui.tui.app import ItoApp
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.error import ErrorScreen
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.runs import RunsScreen

from .pipeline_live import live_app, start_run, wait_for
from .shell_fakes import NOW, FakeShellClient
from .shell_helpers import isolated_user_dirs, settings  # noqa: F401 (autouse fixture)

SPEED = 2000.0
"""Fast enough for events every few hundred ms, slow enough that the run outlives the test."""


def stream_worker(screen: PipelineScreen) -> Worker[Any] | None:
    """The run screen's running stream worker (Textual's public worker manager)."""
    return next(
        (
            w
            for w in screen.workers
            if w.group == "pipeline-stream" and w.state == WorkerState.RUNNING
        ),
        None,
    )


@asynccontextmanager
async def on_a_live_run(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> AsyncIterator[tuple[ItoApp, Pilot[Any], PipelineScreen, str]]:
    """The app started on a running desk_sim run, its run screen on top: (app, pilot,
    screen, run id)."""
    sim = sim_factory(scenario="happy", speed=SPEED)
    run_id = await start_run(sim.url, "happy")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PipelineScreen), what="run screen")
        screen = app.screen
        assert isinstance(screen, PipelineScreen)
        yield app, pilot, screen, run_id


async def test_ctrl_l_on_a_run_keeps_its_screen_and_follows_it_again(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    async with on_a_live_run(sim_factory, tmp_path) as (app, pilot, screen, run_id):
        await wait_for(pilot, lambda: screen.tracker.last_seq > 0, what="the first events")
        before = stream_worker(screen)
        assert before is not None
        stack = list(app.screen_stack)

        await pilot.press("ctrl+l")
        await wait_for(
            pilot,
            lambda: (
                app.session.operator is not None and stream_worker(screen) not in (None, before)
            ),
            what="the run followed again after reconnecting",
        )
        assert app.screen is screen and list(app.screen_stack) == stack
        assert not any(isinstance(s, BookingsScreen) for s in app.screen_stack)
        assert before.state == WorkerState.CANCELLED  # one stream at a time
        seq = screen.tracker.last_seq
        await wait_for(pilot, lambda: screen.tracker.last_seq > seq, what="new events")
        assert app.session.connection == "live" and screen.run_id == run_id
        # The fresh snapshot and the history replayed after it logged nothing twice.
        seqs = [entry.seq for entry in screen.tracker.log]
        assert len(seqs) == len(set(seqs)) and seqs == sorted(seqs)


async def test_ctrl_l_on_the_picker_reads_the_bookings_again(sim: Any, tmp_path: Path) -> None:
    app, _client = live_app(sim.url, "bookings", tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded,
            what="the bookings",
        )
        picker = app.screen
        assert isinstance(picker, BookingsScreen)
        picker.bookings = []  # what a fetch after the reconnect fills again
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: bool(picker.bookings), what="the bookings again")
        assert app.screen is picker and app.session.connection == "live"


async def test_an_unreachable_backend_on_ctrl_l_keeps_the_screens_and_retry_returns_to_them() -> (
    None
):
    # Unreachable is the fake client's (the error screen's path is the same for any
    # BackendUnavailable); the operator's place survives the outage.
    client = FakeShellClient()
    app = make_app(settings(), client, clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        runs = app.screen
        client.fail_with = BackendUnavailable("Backend unreachable: connection refused")
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), what="the error")
        assert app.screen_stack[-2] is runs and app.session.connection == "offline"
        client.fail_with = None
        await pilot.press("r")  # Retry
        await wait_for(pilot, lambda: app.session.connection == "live", what="connected again")
        assert app.screen is runs


async def test_leaving_the_run_the_app_started_on_closes_it_and_its_stream(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    # `ito-tui --start run_…` opens the run as a stack of its own; ctrl+o leaves it for the
    # picker, and nothing leads back to it (ctrl+r opens the runs list): it was left
    # mounted, following its stream and holding the run lent, unseen.
    async with on_a_live_run(sim_factory, tmp_path) as (app, pilot, screen, _run_id):
        await wait_for(pilot, lambda: stream_worker(screen) is not None, what="following")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not screen.is_attached, what="the start run closed")
        assert isinstance(app.screen, BookingsScreen) and stream_worker(screen) is None
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
