"""The layout grows with the terminal: size classes, the run screen's columns and charts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient
from ito_tui.tui import make_app
from ito_tui.tui.layout import HORIZONTAL_BREAKPOINTS, VERTICAL_BREAKPOINTS
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.stages import StageList
from ito_tui.tui.widgets.telemetry import TelemetryPanel

from .pipeline_fakes import NOW, FakeRunClient, runs_list
from .pipeline_live import live_app, shown_pipeline, start_run, wait_for
from .shell_fakes import FakeShellClient
from .shell_helpers import isolated_user_dirs, screen_text, settings  # noqa: F401

SIZES = {
    (80, 24): ({"-narrow", "-short"}, 40, 2),
    (120, 40): ({"-wide", "-tall"}, 50, 3),
    (200, 50): ({"-very-wide", "-very-tall"}, 64, 4),
}
"""Terminal size -> the screen's classes, the left column's width, a chart's height."""
ALL_CLASSES = {name for _, name in HORIZONTAL_BREAKPOINTS + VERTICAL_BREAKPOINTS}
GATE_VALUE = re.compile(r"\d\.\d{3} ± \d+\.\d{3}")
"""A gate result's `82.102 ± 0.380`, on one line."""


async def ended_run(url: str) -> str:
    """A happy run driven to its end (every gate passed)."""
    run_id = await start_run(url, "happy")
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        for _ in range(600):
            if (await client.run(run_id)).terminal:
                return run_id
            await asyncio.sleep(0.05)
    raise AssertionError("the run did not end")


@pytest.mark.parametrize("size", list(SIZES))
async def test_the_run_screen_grows_with_the_terminal(
    sim_factory: Callable[..., Any], tmp_path: Path, size: tuple[int, int]
) -> None:
    classes, left_width, chart_height = SIZES[size]
    sim = sim_factory()
    run_id = await ended_run(sim.url)
    app, client = live_app(sim.url, run_id, tmp_path)
    async with client, app.run_test(size=size) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.run_state.terminal, what="the run's snapshot")
        await pilot.pause(0.5)
        assert {c for c in screen.classes if c in ALL_CLASSES} == classes
        assert screen.query_one("#left").outer_size.width == left_width
        panel = screen.query_one(TelemetryPanel)
        # RLVR's fourteen charts get one row less from 40 rows on, to fit as the nine do.
        rl = panel.has_class("-rl")
        expected = chart_height - 1 if rl and chart_height > 2 else chart_height
        charts = panel.query_one(ChartStack)
        assert charts.rows_per_chart() == expected
        assert charts.outer_size.height == expected * len(charts.keys)
        if size[0] >= 100:
            # Every gated stage's line ends with its verdict (it lost its ✓ at 39 columns).
            lines = screen.query_one(StageList).render().plain.splitlines()  # type: ignore[union-attr]
            gated = [line for line in lines if "gate" in line]
            assert gated and all(line.rstrip().endswith("gate✓") for line in gated), gated
            # The pretrain gate's values each on one line, `82.102 ± 0.380`, not cut in two.
            screen.query_one(StageList).select("pretrain")
            await pilot.pause(0.7)
            assert GATE_VALUE.search(screen_text(pilot))


async def test_the_classes_follow_a_resize(sim_factory: Callable[..., Any], tmp_path: Path) -> None:
    sim = sim_factory()
    run_id = await ended_run(sim.url)
    app, client = live_app(sim.url, run_id, tmp_path)
    async with client, app.run_test(size=(80, 24)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: screen.has_class("-very-wide"), what="-very-wide")
        await pilot.pause(0.3)
        assert screen.has_class("-very-tall") and not screen.has_class("-narrow")
        assert screen.query_one("#left").outer_size.width == 64


@pytest.mark.parametrize("width", [80, 120])
async def test_the_footer_keeps_quit_and_help_at_80_columns(width: int) -> None:
    app = make_app(
        settings(backend_url="http://127.0.0.1:8741"),
        FakeRunClient(summaries=runs_list()),  # one waits: `p Review` too
        clock=lambda: NOW,
        start="runs",
    )
    async with app.run_test(size=(width, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        await pilot.pause()
        palette = app.screen.query_one("FooterKey.-command-palette")
        keys = {
            str(getattr(key, "description", "")): key.region
            for key in app.screen.query("FooterKey")
            if not key.has_class("-command-palette")
        }
        # Whole, left of the palette key: the runs list's own keys, then Quit and Help.
        for name in ("Filter", "Refresh", "Review", "Cancel run", "Decisions", "Quit", "Help"):
            assert keys[name].right <= palette.region.x, (name, keys[name], palette.region)
        # The compact form (`s Filter`, no padding) only below 100 columns (` s Filter `).
        assert keys["Filter"].width == (len("s Filter") if width < 100 else len(" s Filter "))


@pytest.mark.parametrize("size", [(120, 40), (200, 50)])
async def test_the_booking_detail_is_on_screen_beside_or_under_the_table(
    size: tuple[int, int],
) -> None:
    app = make_app(settings(backend_url="http://127.0.0.1:8741"), FakeShellClient())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        await pilot.pause(0.2)
        table = app.screen.query_one("#bookings-table").region
        detail = app.screen.query_one("#bookings-detail").region
        if size[0] >= 160:  # beside the table, with most of the width (it was pushed off)
            assert table.right <= detail.x and detail.right <= size[0]
            assert detail.width >= size[0] // 2
        else:  # under it
            assert detail.y >= table.bottom and detail.width == size[0]
        assert detail.height >= 20
