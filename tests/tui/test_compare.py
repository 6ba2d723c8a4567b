"""The reference run on the run screen: `c` picks another run (type to filter, none
clears), every chart draws it as a dashed line with a legend in the Telemetry caption;
its fetch goes through the client in a worker, again while it is active, and a failed one
says so and keeps what was drawn; `v` shows the spec diff with it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.client import BackendUnavailable
from ito_tui.tui import run_compare
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.run_picker import RunPicker
from ito_tui.tui.screens.spec_diff import DIFFERS, SpecDiffScreen
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.chart_text import REF_GLYPH
from ito_tui.tui.widgets.telemetry import TelemetryPanel
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .compare_fakes import REF_ID, CompareClient, ref_run
from .pipeline_fakes import NOW, RUN_ID, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


def caption(screen: PipelineScreen) -> str:
    return str(screen.query_one("#telemetry-caption").render())


def loss_rows(screen: PipelineScreen) -> list[str]:
    return screen.query_one(ChartStack).chart_text("loss")


@asynccontextmanager
async def on_the_run(client: CompareClient) -> AsyncIterator[tuple[Pilot[Any], PipelineScreen]]:
    """The app over `client` at 120x40, settled on the run screen."""
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PipelineScreen)
        yield pilot, screen


async def pick(pilot: Any, query: str = "") -> RunPicker:
    """`c`, the list read, `query` typed, Enter."""
    await pilot.press("c")
    picker = pilot.app.screen
    assert isinstance(picker, RunPicker)
    await wait_for(pilot, lambda: picker.loaded, what="the runs read")
    if query:
        await pilot.press(*query)
    await pilot.press("enter")
    return picker


async def test_a_picked_run_is_drawn_on_every_chart_and_named_in_the_legend() -> None:
    client = CompareClient(script=pretrain_script().events)
    async with on_the_run(client) as (pilot, screen):
        assert REF_GLYPH not in "".join(loss_rows(screen)) and screen.reference is None
        picker = await pick(pilot)
        # This run is not offered; the runs list's others are, newest first.
        assert [r.run_id for r in picker.runs] == [REF_ID, "run_0e7b33"]
        await wait_for(pilot, lambda: screen.reference is not None, what="the reference")
        await settle(pilot)
        assert screen.reference is not None and screen.reference.run_id == REF_ID
        # Fetched through the client: one page of at most REF_POINTS points.
        assert client.reference_reads == [(REF_ID, run_compare.REF_POINTS, ())]
        view = screen.query_one(ChartStack).view("loss")
        assert view is not None and view.ref_label is not None and REF_ID in view.ref_label
        assert any(v is not None for v in view.ref_highs)
        assert REF_GLYPH in "".join(loss_rows(screen))
        assert f"{REF_GLYPH} {REF_ID} (by tokens)" in caption(screen)
        # The spec diff with the reference.
        await pilot.press("v")
        diff = pilot.app.screen
        assert isinstance(diff, SpecDiffScreen)
        await wait_for(pilot, lambda: diff.loaded, what="the spec diff")
        assert (diff.a_id, diff.b_id) == (RUN_ID, REF_ID)
        assert {r.field for r in diff.rows if r.differs} >= {"booking", "seq len", "GPUs"}
        await pilot.press("escape")
        # `none` clears it: the charts are this run's alone again.
        await pick(pilot, "none")
        await wait_for(pilot, lambda: screen.compare.run_id is None, what="no reference")
        await settle(pilot)
        assert screen.reference is None
        assert REF_GLYPH not in "".join(loss_rows(screen))
        assert "by tokens" not in caption(screen)
        assert not screen.check_action("spec_diff", ())


async def test_escape_leaves_the_reference_as_it_was() -> None:
    client = CompareClient(script=pretrain_script().events)
    async with on_the_run(client) as (pilot, screen):
        await pilot.press("c")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.compare.run_id is None and client.reference_reads == []


async def test_enter_typed_ahead_of_the_runs_list_picks_the_first_match_once_read() -> None:
    """`c`, `ref`, Enter as fast as one types: the list is still being read, the filter
    matches nothing yet. Enter is kept and picks the match once the list is read."""
    client = CompareClient(script=pretrain_script().events)
    async with on_the_run(client) as (pilot, screen):
        client.runs_read = read = asyncio.Event()  # the app's own first reads went through
        await pilot.press("c", *REF_ID[:7], "enter")
        picker = pilot.app.screen
        assert isinstance(picker, RunPicker) and not picker.loaded
        status = str(picker.query_one("#run-picker-status").render())
        assert "Enter taken: the first match is drawn" in status
        read.set()
        await wait_for(pilot, lambda: screen.reference is not None, what="the reference")
        assert pilot.app.screen is screen and screen.compare.run_id == REF_ID


async def test_a_failed_fetch_says_so_and_keeps_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_compare, "REFRESH_S", 0.05)
    client = CompareClient(script=pretrain_script().events, others={REF_ID: ref_run("running")})
    async with on_the_run(client) as (pilot, screen):
        await pick(pilot)
        await wait_for(pilot, lambda: screen.reference is not None, what="the reference")
        first = screen.reference
        # An active run is fetched again; now the backend fails.
        client.reference_error = BackendUnavailable("connection refused")
        await wait_for(pilot, lambda: screen.compare.error is not None, what="the failure")
        await settle(pilot)
        assert screen.reference is first
        assert "fetch failed, the last kept" in caption(screen)
        assert REF_GLYPH in "".join(loss_rows(screen))
        # It answers again: the legend says so no more.
        client.reference_error = None
        await wait_for(pilot, lambda: screen.compare.error is None, what="a fetch that works")
        await settle(pilot)
        assert "fetch failed" not in caption(screen)
        assert len(client.reference_reads) >= 3


async def test_a_finished_reference_is_fetched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_compare, "REFRESH_S", 0.05)
    client = CompareClient(script=pretrain_script().events)
    async with on_the_run(client) as (pilot, screen):
        await pick(pilot)
        await wait_for(pilot, lambda: screen.compare.fetches == 1, what="the fetch")
        await pilot.pause(0.3)
        assert len(client.reference_reads) == 1


async def test_a_first_fetch_that_fails_draws_nothing_and_says_so() -> None:
    client = CompareClient(
        script=pretrain_script().events, reference_error=BackendUnavailable("connection refused")
    )
    async with on_the_run(client) as (pilot, screen):
        await pick(pilot)
        await wait_for(pilot, lambda: screen.compare.error is not None, what="the failure")
        await settle(pilot)
        assert screen.reference is None
        assert "fetch failed, nothing to draw" in caption(screen)
        assert REF_GLYPH not in "".join(loss_rows(screen))
        assert DIFFERS  # the spec diff's mark (used by its own tests)


async def test_an_open_metric_charted_later_is_fetched_for_the_reference_too() -> None:
    client = CompareClient(script=pretrain_script().events)
    async with on_the_run(client) as (pilot, screen):
        await pick(pilot)
        await wait_for(pilot, lambda: screen.compare.fetches == 1, what="the fetch")
        screen.query_one(TelemetryPanel).toggle_extra("loss_metrics/global_avg_loss")
        await wait_for(pilot, lambda: screen.compare.fetches == 2, what="a fetch with it")
        assert client.reference_reads[-1][2] == ("loss_metrics/global_avg_loss",)
        # A resize or a window change asks nothing new.
        await pilot.press("w")
        await pilot.pause(0.3)
        assert len(client.reference_reads) == 2
