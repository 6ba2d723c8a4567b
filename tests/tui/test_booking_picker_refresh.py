"""The booking picker does not go stale: a booking a run held is free again once it ended."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from textual.widgets import DataTable

from ito_tui.client import ItoClient
from ito_tui.config import Settings
from ito_tui.tui import make_app
from ito_tui.tui.app import ItoApp
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.session import TokenCell

from .pipeline_live import start_run, wait_for

TOKEN = "s3cret"  # the simulator's test token


def picker_app(url: str) -> tuple[ItoApp, ItoClient]:
    cell = TokenCell(SecretStr(TOKEN))
    client = ItoClient(url, token=cell)
    app = make_app(Settings(backend_url=url, refresh_s=1.0), client, start="bookings", token=cell)
    return app, client


def status_of(app: ItoApp, booking_id: str) -> str | None:
    """The `Run / status` cell of `booking_id` as the picker shows it (None until shown)."""
    screen = app.screen_stack[0]
    assert isinstance(screen, BookingsScreen)
    table = screen.query_one(DataTable)
    if booking_id not in table.rows:
        return None
    return str(table.get_row(booking_id)[-1])


async def booking_of(url: str, run_id: str) -> str:
    async with ItoClient(url, token=SecretStr(TOKEN)) as client:
        return (await client.run(run_id)).booking_id


async def cancel(url: str, run_id: str) -> None:
    async with ItoClient(url, token=SecretStr(TOKEN)) as client:
        await client.cancel_run(run_id, reason="test")


async def test_a_busy_booking_shows_ready_once_its_run_ended(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    # A slow clock: the run holds its booking until the test cancels it.
    sim = sim_factory(speed=60.0)
    run_id = await start_run(sim.url, "happy")
    booking = await booking_of(sim.url, run_id)
    app, client = picker_app(sim.url)
    async with client, app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: status_of(app, booking) == f"busy {run_id}", what="busy")
        await cancel(sim.url, run_id)
        # No `r`: the picker polls while it shows a busy booking.
        await wait_for(pilot, lambda: status_of(app, booking) == "ready", what="ready again")


async def test_the_picker_reads_the_bookings_again_when_it_comes_back(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(speed=60.0)
    app, client = picker_app(sim.url)
    async with client, app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen_stack[0].loaded, what="bookings")  # type: ignore[attr-defined]
        run_id = await start_run(sim.url, "happy")  # elsewhere: the CLI, another operator
        booking = await booking_of(sim.url, run_id)
        assert status_of(app, booking) == "ready"  # nothing busy yet: no poll
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="runs list")
        await pilot.press("escape")
        await wait_for(pilot, lambda: status_of(app, booking) == f"busy {run_id}", what="busy")
