"""The run summary panel's place on the run screen, over a fake backend: hidden (and `n`
not offered) while the run goes on; once it has ended, picking another stage in the list
scrolls that stage's detail into view under the panel, and the current one back to it."""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll

from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.widgets.run_summary import RunSummaryPanel
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, pretrain_script, run_snapshot
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)
from .test_run_summary_snapshots import ESTIMATE, completed_script


def pipeline(app: Any) -> PipelineScreen:
    screen = app.screen
    assert isinstance(screen, PipelineScreen), app.screen_stack
    return screen


async def test_while_the_run_goes_on_there_is_no_summary_and_no_new_run_key() -> None:
    client = FakeRunClient(script=pretrain_script().events, run_model=run_snapshot())
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = pipeline(app)
        panel = screen.query_one(RunSummaryPanel)
        assert panel.end is None and not panel.display
        assert screen.check_action("new_run", ()) is False
        assert screen.check_action("cancel_run", ()) is True
        assert client.telemetry_reads.count(RUN_ID) == 1  # the backfill only: nothing more


async def test_picking_a_stage_scrolls_its_detail_into_view_under_the_summary() -> None:
    client = FakeRunClient(
        script=completed_script().events, run_model=run_snapshot(estimate=ESTIMATE)
    )
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = pipeline(app)
        panel = screen.query_one(RunSummaryPanel)
        await wait_for(pilot, lambda: panel.end is not None and panel.display, what="summary")
        scroll = screen.query_one("#detail-scroll", VerticalScroll)
        assert scroll.scroll_y == 0  # the summary first, on the current stage
        assert screen.check_action("new_run", ()) is True
        screen.query_one("#stages").focus()
        await pilot.press("up")  # plan: another stage than the current one
        await wait_for(pilot, lambda: scroll.scroll_y > 0, what="the plan's detail in view")
        await pilot.press("down")  # pretrain, the current stage: the summary again
        await wait_for(pilot, lambda: scroll.scroll_y == 0, what="the summary in view")
