"""At 80x24 the run strip keeps the booking id and the spend, whatever the run's state says."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from textual.widgets import Static

from ito_tui.tui.widgets.spend_bar import SpendBar, spend_bar_text

from .pipeline_live import live_app, shown_pipeline, start_run, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse: no real config)


async def test_the_booking_id_stays_at_80_columns_awaiting_approval(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    # The showcase asks a person about a loss spike: the longest state, `awaiting approval`.
    sim = sim_factory(scenario="showcase", speed=300_000.0, approval_speed=5.0)
    run_id = await start_run(sim.url, "showcase")
    app, client = live_app(sim.url, run_id, tmp_path)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await shown_pipeline(pilot, app)
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
        # The bar's figures whole: the compact money form where the exact one has no room.
        bar = str(spend.render())
        assert len(bar) <= spend.region.width and bar.endswith("%"), bar
        assert re.search(r" \$[\d.,]+K?/\$[\d.,]+[KM]? \d+%$", bar), bar
        # The step and ETA give way (the stage list under the strip shows them).
        assert not screen.query_one("#run-progress").display


def test_the_spend_bar_writes_compact_money_where_the_exact_has_no_room() -> None:
    spent, budget = Decimal("8500.00"), Decimal("25000.00")
    assert spend_bar_text(spent, budget, 40).endswith(" $8,500.00/$25,000.00 34%")
    narrow = spend_bar_text(spent, budget, 24)
    # 24 cells at 80 columns: the exact figures (25 cells) would leave no bar and be cut.
    assert narrow.endswith(" $8.5K/$25.0K 34%") and len(narrow) == 24
