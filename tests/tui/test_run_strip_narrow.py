"""At 80x24 the run strip keeps the booking id and the spend, whatever the run's state says."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import Static

from ito_tui.tui.widgets.spend_bar import SpendBar

from .pipeline_live import has_pipeline, live_app, pipeline_of, start_run, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse: no real config)


async def test_the_booking_id_stays_at_80_columns_awaiting_approval(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    # The showcase asks a person about a loss spike: the longest state, `awaiting approval`.
    sim = sim_factory(scenario="showcase", speed=300_000.0, approval_speed=5.0)
    run_id = await start_run(sim.url, "showcase")
    app, client = live_app(sim.url, run_id, tmp_path)
    async with client, app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: has_pipeline(app), what="pipeline screen")
        screen = pipeline_of(app)
        await wait_for(
            pilot, lambda: str(screen.run_state.state) == "awaiting_approval", what="the ask"
        )
        await pilot.pause(0.5)
        booking = screen.query_one("#run-booking", Static)
        status = screen.query_one("#run-status", Static)
        spend = screen.query_one(SpendBar)
        assert booking.display and str(booking.render()) == f"booking {screen.run_state.booking_id}"
        # All of it on screen: the booking after the state, the spend bar after the booking.
        assert booking.region.width == len(str(booking.render()))
        assert status.region.right <= booking.region.x
        assert booking.region.right < spend.region.x and spend.region.right <= 80
        assert spend.region.width >= 20
        # The step and ETA give way (the stage list under the strip shows them).
        assert not screen.query_one("#run-progress").display
