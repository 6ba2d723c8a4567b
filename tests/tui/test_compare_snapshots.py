"""Snapshots of a reference run overlaid on the Telemetry tab, the run picker, and the spec
diff, as the user gets them (`make_app`, the fake backend's fixed runs, a frozen clock),
at 80x24 and 120x40, in `ito-dark` and `ito-ansi`."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.run_picker import RunPicker
from ito_tui.tui.screens.spec_diff import SpecDiffScreen
from tests.support.apps import (
    SIZE_IDS,
    SIZES,
    assert_steady_fields,
    settle,
    settle_quiet,
    snapshot_app,
)
from tests.support.waiting import wait_for

from .compare_fakes import CompareClient
from .pipeline_fakes import NOW, RUN_ID, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

THEMES = ["ito-dark", "ito-ansi"]


def client() -> CompareClient:
    return CompareClient(script=pretrain_script().events)


async def picker_open(pilot: Pilot[Any]) -> RunPicker:
    await settle_quiet(pilot)
    await pilot.press("c")
    picker = pilot.app.screen
    assert isinstance(picker, RunPicker)
    await wait_for(pilot, lambda: picker.loaded, what="the runs read")
    assert_steady_fields(picker)
    # The toasts expire on the wall clock: a picture never waits on them (`settle_quiet`).
    pilot.app.clear_notifications()
    await pilot.pause()
    return picker


async def compared(pilot: Pilot[Any]) -> None:
    await picker_open(pilot)
    await pilot.press("enter")
    screen = pilot.app.screen
    assert isinstance(screen, PipelineScreen)
    await wait_for(pilot, lambda: screen.reference is not None, what="the reference")
    await settle_quiet(pilot)


async def diffed(pilot: Pilot[Any]) -> None:
    await compared(pilot)
    await pilot.press("v")
    diff = pilot.app.screen
    assert isinstance(diff, SpecDiffScreen)
    await wait_for(pilot, lambda: diff.loaded, what="the spec diff")
    await settle_quiet(pilot)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_reference_overlaid(snap_compare: Any, size: tuple[int, int], theme: str) -> None:
    """You should see run_7f3a9c's Telemetry tab with run_5b21e0 drawn on every chart as a
    dashed line: ┄ above this run's area, ╌ cut (reversed) into it, none where it falls on
    this run's own curve (the bars keep their shape): on the loss chart the two agree at
    first and the line runs inside the area, below our curve, from about step 300 on; the
    caption starts with the legend `┄ run_5b21e0 (by tokens) · ▆ this run`; each chart's
    last value row says the reference's value where this run is now (`┄ 1.91` on the loss).
    The footer offers `v Spec diff`."""
    app = snapshot_app(client(), now=NOW, start=RUN_ID, theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=compared)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_run_picker(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Compare picker over the run screen: `Compare run_7f3a9c with`, a
    filter line, the status `2 of 2 runs · Enter draws it beside`, then `none: this run
    alone` and the two other runs (run_5b21e0 completed, run_0e7b33 cancelled) with size
    and booking, run_5b21e0 highlighted."""
    app = snapshot_app(client(), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=picker_open)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_spec_diff(snap_compare: Any, size: tuple[int, int], theme: str) -> None:
    """You should see the spec diff of run_7f3a9c and run_5b21e0: the caption
    `run_7f3a9c vs run_5b21e0 · N fields differ (≠) · d: only those`, then Spec, Plan and
    Estimate headings, one row per field with both runs' values; the differing ones
    (booking, seq len, budget, GPUs, the plan's layout, every cost and time) marked ≠ and
    bold, the same ones (model size, data ref, tokens, post-training) unmarked."""
    app = snapshot_app(client(), now=NOW, start=RUN_ID, theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=diffed)


async def two_marked(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("space", "down", "space")
    await settle_quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_runs_two_marked(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the runs list with run_7f3a9c marked `#1` and run_5b21e0 `#2` (bold
    reverse before their ids), the caption ending `marked #1 run_7f3a9c, #2 run_5b21e0 (c
    compares, v spec diff)`, and `c Compare` and `v Spec diff` in the footer."""
    app = snapshot_app(client(), now=NOW, start="runs")
    assert snap_compare(app, terminal_size=size, run_before=two_marked)
