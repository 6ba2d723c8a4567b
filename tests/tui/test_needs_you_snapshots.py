"""Snapshots of what the app's watcher adds: the runs list's marks and the header counter."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.alerting.needs import MissedProposal, NeedsYou, PendingProposal
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.widgets.header import HeaderStrip

from .pipeline_fakes import NOW, FakeClient, runs_list
from .pipeline_harness import RunScreensHarness
from .test_pipeline_snapshots import SIZES, settle

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
    """The list fetched, and the header badged as the app badges it."""
    await settle(pilot)
    for header in pilot.app.screen.query(HeaderStrip):
        header.needs_you, header.needs_you_left_s = 1, 130.0
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES)
def test_runs_list_marks_what_needs_you_and_what_was_missed(
    snap_compare: Any, size: tuple[int, int]
) -> None:
    """You should see `⚠ 1 needs you · 2m10s` in the header before DEMO; run_7f3a9c first
    with `⚠ 1 to approve · 2m10s`; the running SFT run marked `○ expired unseen`; the
    failed mid-train run `✗ gate failed · decided by bob`; the others unmarked."""
    app = RunScreensHarness(FakeClient(summaries=runs_list()), RunsScreen())
    app.needs_you = NEEDS_YOU  # type: ignore[attr-defined]  # as ItoApp.needs_you
    assert snap_compare(app, terminal_size=size, run_before=with_counter)
