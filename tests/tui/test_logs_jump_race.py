"""The operator's key wins over an answer still on its way: End pressed while the Logs tab
is still fetching the lines at a fault follows the newest lines, and the fetch, when it
comes, does not take the view back to the fault (the tmux test of the showcase saw the
pane stay `at fault` after End on a loaded machine)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from textual.widgets import Static

from ito_tui.contract import LogPage
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.widgets.logs_pane import LogsPane
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .logs_fakes import FakeLogsClient, fault_time, trainer_log, with_node_failure
from .pipeline_fakes import NOW, RUN_ID, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


@dataclass
class HeldPages(FakeLogsClient):
    """Its page reads wait while `held` is clear and `hold_if()` says so (the backend
    answering late)."""

    held: asyncio.Event = field(default_factory=asyncio.Event)
    hold_if: Callable[[], bool] = lambda: True
    waiting: int = 0

    async def log_page(self, run_id: str, **kwargs: Any) -> LogPage:
        if self.hold_if():
            self.waiting += 1
            try:
                await self.held.wait()
            finally:
                self.waiting -= 1
        return await super().log_page(run_id, **kwargs)


@pytest.mark.parametrize("stage", ["finding the line", "loading the lines around it"])
async def test_end_while_the_lines_at_a_fault_load_follows_and_stays_following(
    stage: str,
) -> None:
    events, failed_at = with_node_failure(pretrain_script())
    # Five hours of lines: the fault is older than the tail the tab holds, so Enter on it
    # asks the server for the lines at its time.
    lines = trainer_log(3000, fault_at=fault_time(events), xid_at=failed_at)
    client = HeldPages(script=events, log_lines=lines)
    async with snapshot_app(client, now=NOW, start=RUN_ID).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PipelineScreen)
        pane = screen.query_one(LogsPane)
        if stage != "finding the line":
            # Past the search for the fault's line: its lines load into a fresh buffer.
            client.hold_if = lambda: pane.positioned
        await pilot.press("2", "enter")
        await wait_for(pilot, lambda: client.waiting > 0, what="the lines at the fault asked")
        await pilot.press("end")
        await wait_for(pilot, lambda: pane.view.following, what="End followed")
        client.held.set()
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        await pilot.pause(0.3)
        caption = str(pane.query_one("#logs-caption", Static).render())
        assert pane.view.following, caption
        assert caption.startswith("following"), caption
        # It shows the newest line of the log, not the fault's.
        assert pane.view.bottom_index == len(pane.buffer) - 1
        assert pane.buffer.line(len(pane.buffer) - 1).seq == client.log_lines[-1].seq
