"""Snapshots of the run screen's Logs tab as the user gets it (`make_app`, a fake backend's
fixed run and job log, a frozen clock): following, filtered with a search hit, and on a
backend without `runs.logs`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.tui.widgets.logs_pane import LogsPane
from tests.support.apps import SIZE_IDS, SIZES, settle, settle_quiet, snapshot_app
from tests.support.caps import CAPABILITY_NAMES, capabilities
from tests.support.waiting import wait_for

from .logs_fakes import FakeLogsClient, fault_time, trainer_log
from .pipeline_fakes import NOW, RUN_ID, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


def logs_client(**kw: Any) -> FakeLogsClient:
    """run_7f3a9c with 300 trainer lines around its fault (from 10 minutes before it)."""
    script = pretrain_script()
    at = fault_time(script.events)
    lines = trainer_log(300, fault_at=at, start=at - timedelta(minutes=10))
    return FakeLogsClient(script=script.events, log_lines=lines, **kw)


def on_logs(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A `run_before`: the script played out, the Logs tab shown, its lines in, `keys`."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("4")
        pane = pilot.app.screen.query_one(LogsPane)
        if pane.offered:
            await wait_for(pilot, lambda: len(pane.buffer) > 0, what="the log's lines")
        for key in keys:
            await pilot.press(key)
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the log's repaint")
        await settle_quiet(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_logs_following(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Logs tab chosen and its caption `following · filter: all`, then
    the newest job-log lines at the bottom (rank 0's trainer lines, `step: 3000  loss: …`),
    each starting with its time (UTC), rank (`r0`) and level letter (`I`); at 120 columns
    also its source (`trainer`); `end Follow`, `/ Search`, `e Error`, `l Level` in the
    footer."""
    app = snapshot_app(logs_client(), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=on_logs())


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_logs_filtered_with_a_search_hit(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see only warning-and-worse lines (`filter: warning+` in the caption, after
    `paused — End to follow, 0 new` and `/watchdog`): the Xid line (system, `E`, no rank),
    the NCCL watchdog timeouts of ranks 8–11 (`E`, at 120 columns source `nccl`) and rank
    8's traceback (`C`); the newest timeout (rank 11) marked as the search hit, and the word
    `Watchdog` highlighted in every timeout line that shows it."""
    app = snapshot_app(logs_client(), now=NOW, start=RUN_ID)
    keys = ("l", "l", "slash", *"watchdog", "enter")
    assert snap_compare(app, terminal_size=size, run_before=on_logs(*keys))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_logs_without_the_capability(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Logs tab chosen and, in it only, `not offered by this backend
    (capability runs.logs)`; the header, the stage list and the tab bar as on any run."""
    caps = capabilities(*(n for n in CAPABILITY_NAMES if n != "runs.logs"), missing=["runs.logs"])
    app = snapshot_app(logs_client(caps=caps), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=on_logs())
