"""Snapshots of what the app's watcher adds: the runs list's marks and the header counter,
in the real app (`make_app`) over the runs list's fixed data and a frozen clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.alerting.needs import MissedProposal, NeedsYou, PendingProposal
from ito_tui.tui import ItoApp
from ito_tui.tui.needs_you import NeedsYouChanged
from ito_tui.tui.widgets.header import HeaderStrip
from tests.support.apps import SIZE_IDS, SIZES, settle, settle_quiet, snapshot_app

from .pipeline_fakes import NOW, FakeRunClient, runs_list
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

NEEDS_YOU = NeedsYou.of(
    [PendingProposal("run_7f3a9c", "prop_7f3a_0", "rollback_and_skip", NOW + timedelta(
        minutes=2, seconds=10), "pretrain")],
    [
        MissedProposal(
            "run_5b21e0", "prop_5b21_0", "reduce_lr", "expired", None, NOW, seen=False
        ),
        MissedProposal(
            "run_3c9d11", "prop_3c9d_0", "rollback_and_skip", "decided", "bob", NOW, seen=True
        ),
    ],
)  # fmt: skip


async def with_counter(pilot: Pilot[Any]) -> None:
    """The list fetched, then the watcher's news as the app hands it on: the counter in
    each header (`AppAlerts.badge`) and `NeedsYouChanged` to the screen on top."""
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, ItoApp)
    app.alerting.needs_you = NEEDS_YOU
    for header in app.screen.query(HeaderStrip):
        app.alerting.badge(header)
    app.screen.post_message(NeedsYouChanged(NEEDS_YOU))
    await settle_quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_runs_list_marks_what_needs_you_and_what_was_missed(
    snap_compare: Any, size: tuple[int, int]
) -> None:
    """You should see `⚠ 1 needs you · 2m10s` in the header before DEMO; run_7f3a9c first
    with `⚠ 1 to approve · 2m10s`; the running SFT run marked `○ expired unseen`; the
    failed mid-train run `✗ gate failed · decided by bob`; the others unmarked."""
    app = snapshot_app(FakeRunClient(summaries=runs_list()), now=NOW, start="runs")
    assert snap_compare(app, terminal_size=size, run_before=with_counter)
