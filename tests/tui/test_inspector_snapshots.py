"""Snapshots of the chart inspector as the user gets it (`make_app`, the real CSS, bindings
and footer) over run_7f3a9c: a pretrain with a node failure at step 400, rewound from 520
to 460 (the rollback) and run on to 600."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.support.apps import SIZE_IDS, SIZES, settle, snapshot_app

from .inspector_fakes import NOW, RUN_ID, inspect, reference, rewound_client
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

THEMES = ["ito-dark", "ito-ansi"]


def opened(*keys: str, ref: bool = False) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        inspector = await inspect(pilot, ref=reference() if ref else None)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.1)
        assert inspector.status == ""
        pilot.app.clear_notifications()
        await pilot.pause()

    return run_before


def snap(snap_compare: Any, size: tuple[int, int], theme: str, before: Any) -> bool:
    app = snapshot_app(rewound_client(), now=NOW, start=RUN_ID, theme=theme)
    return bool(snap_compare(app, terminal_size=size, run_before=before))


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_inspector_loss_with_the_rollback(
    snap_compare: Any, size: tuple[int, int], theme: str
) -> None:
    """You should see the loss of run_7f3a9c over steps 10–600 full-screen: the title
    (loss · x: step · log-Y off · raw), the readout of the cursor's last column (step
    600, its loss to 8 digits, the date and time UTC; its bucket and tokens), y ticks
    with their values on the left, the loss falling from ~4.6; the band over steps
    460–520 holding both branches (ran twice), the marker row with `!` (the node failure
    at 400; its recovery `✓` falls in the same column), `↶` (the rewind to 460) and `•`
    (checkpoints), x ticks in steps, the legend and
    the note that steps ran twice; the footer's keys. In ito-ansi the plot is ASCII."""
    assert snap(snap_compare, size, theme, opened())


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_inspector_cursor_on_the_fault(
    snap_compare: Any, size: tuple[int, int], theme: str
) -> None:
    """You should see the cursor (a reversed column) on the `!` of the node failure at
    step 400; the readout's second row names it: `! fault node_failure on gpu-node-07
    (f1)`."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        inspector = await inspect(pilot)
        view = inspector.view
        assert view is not None
        column = next(col for col, mark in view.marks if mark.kind == "fault")
        await pilot.press(*(["left"] * (view.cursor - column)))
        await pilot.pause(0.1)
        assert inspector.view is not None and inspector.view.readout is not None
        assert any(m.kind == "fault" for m in inspector.view.readout.marks)
        pilot.app.clear_notifications()

    assert snap(snap_compare, size, theme, run_before)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_inspector_log_y(snap_compare: Any, size: tuple[int, int], theme: str) -> None:
    """You should see the same loss on a log y axis (`log-Y on` in the title): ticks at
    round loss values spaced by their logarithm."""
    assert snap(snap_compare, size, theme, opened("l"))


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_inspector_smoothing_with_raw(snap_compare: Any, size: tuple[int, int], theme: str) -> None:
    """You should see the EMA at 0.9 (`EMA 0.9` in the title and the legend) drawn bold
    over the raw line, which stays drawn (in ito-ansi `o` over `*`, `@` where both)."""
    assert snap(snap_compare, size, theme, opened("s", "s"))


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_inspector_reference_overlaid(snap_compare: Any, size: tuple[int, int], theme: str) -> None:
    """You should see the reference run_prev01 aligned by tokens seen (its steps are
    twice ours) as a dotted line (`+` in ito-ansi) beside the solid loss, the legend
    naming it `run_prev01 (by tokens)`, the readout its value and the difference."""
    assert snap(snap_compare, size, theme, opened(ref=True))
