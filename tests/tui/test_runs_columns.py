"""The runs list fits the terminal: id, booking, state and spend always show; the state is cut."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable

from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.screens.runs_table import COLUMNS, plan

from .pipeline_fakes import FakeRunClient, summary
from .shell_fakes import NOW
from .shell_helpers import isolated_user_dirs, screen_text, settings, wait_for  # noqa: F401

LONG_BOOKING = "bk_h100_32n_ib_reserved_eval"
"""28 characters: longer than the column's cap of 24, so it is cut, past its `bk_`."""


def runs_app(*runs: Any) -> ItoApp:
    client = FakeRunClient(summaries=list(runs))
    return make_app(
        settings(backend_url="http://127.0.0.1:8741"), client, clock=lambda: NOW, start="runs"
    )


def waiting_run() -> Any:
    run = summary(
        "run_7f3a9c0d12ab", "awaiting_approval", "long_context", 0.43, "8500.00", pending=1
    )
    return run.model_copy(update={"booking_id": LONG_BOOKING})


def running_run() -> Any:
    return summary("run_5b21e0aa3f41", "running", "sft", 0.71, "19320.50")


def shown(app: ItoApp) -> tuple[list[str], list[list[str]]]:
    """The table's column keys and its rows' plain texts."""
    table = app.screen.query_one(DataTable)
    keys = [str(key.value) for key in table.columns]
    rows = [
        [getattr(c, "plain", str(c)) for c in table.get_row_at(i)] for i in range(table.row_count)
    ]
    return keys, rows


def test_at_80_columns_the_state_is_cut_never_the_spend() -> None:
    cells = {
        "run": ["run_7f3a9c0d12ab"],
        "state": ["awaiting approval"],
        "needs you": ["⚠ 1 to approve · 2m10s"],
        "stage": ["long-context 43%"],
        "spend / budget": ["$8.5K / $25.0K"],
        "booking": [LONG_BOOKING],
        "updated UTC": ["11-29 23:00:00"],
    }
    columns = plan(80, cells)
    widths = dict(columns.widths)
    assert list(widths) == ["run", "state", "spend / budget", "booking"]
    assert widths["run"] == 16 and widths["spend / budget"] == 14 and widths["booking"] == 24
    assert widths["state"] < len("⚠ 1 to approve · 2m10s")  # cut, and what needs you is in it
    assert columns.merged
    assert sum(w + 2 for w in widths.values()) <= 80
    # With room, every column comes back at its full width, needs-you in its own.
    assert [k for k, _ in plan(200, cells).widths] == list(cells)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
async def test_the_runs_list_shows_id_booking_state_and_spend(size: tuple[int, int]) -> None:
    app = runs_app(waiting_run(), running_run())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        keys, rows = shown(app)
        # Nothing sideways: the table is no wider than the terminal.
        assert table.virtual_size.width <= table.size.width
        assert {"run", "state", "spend / budget", "booking"} <= set(keys)
        waiting = dict(zip(keys, rows[0], strict=True))
        assert waiting["run"] == "run_7f3a9c0d12ab"
        assert waiting["booking"] == LONG_BOOKING[:23] + "…"  # far past `bk_`
        text = screen_text(pilot)
        if size[0] < 100:
            assert waiting["spend / budget"] == "$8.5K / $25.0K"
            assert waiting["state"].startswith("⚠ 1 to approve")  # no room for its own column
        else:
            assert waiting["spend / budget"] == "$8,500.00 / $25,000.00"
            assert any(cell.startswith("⚠ 1 to approve") for cell in rows[0])
        if size[0] >= 160:  # room for every column, what needs you in its own
            assert keys == list(COLUMNS)
            assert waiting["state"] == "awaiting approval"
            assert waiting["needs you"] == "⚠ 1 to approve"
        assert waiting["spend / budget"] in text and "run_5b21e0aa3f41" in text


async def test_the_columns_follow_a_resize() -> None:
    app = runs_app(waiting_run(), running_run())
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        assert "updated UTC" in shown(app)[0]
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: "updated UTC" not in shown(app)[0], what="narrow columns")
        table = app.screen.query_one(DataTable)
        assert table.virtual_size.width <= 80
        assert table.row_count == 2
