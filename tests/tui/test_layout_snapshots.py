"""Snapshots of the real app (make_app: its CSS, bindings, header and footer) at 200x50:
the layout uses the space of a big terminal (wider left column, taller charts)."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.pipeline import PipelineScreen

from .pipeline_fakes import NOW, RUN_ID, FakeClient, gate_fail_script, pretrain_script
from .shell_helpers import isolated_user_dirs, settings  # noqa: F401

SIZE = (200, 50)


def run_app(client: FakeClient) -> ItoApp:
    return make_app(
        settings(backend_url="http://127.0.0.1:8741"), client, clock=lambda: NOW, start=RUN_ID
    )


async def settle(pilot: Pilot[Any]) -> None:
    """Until every scripted event is applied and the coalesced repaints have run."""
    app = pilot.app
    for _ in range(100):
        await pilot.pause(0.05)
        screens = [s for s in app.screen_stack if isinstance(s, PipelineScreen)]
        if not screens:
            continue
        screen, client = screens[0], app.client  # type: ignore[attr-defined]
        if screen.tracker.last_seq >= len(client.script) and not screen.repaints.pending:
            break
    await pilot.pause(0.6)
    # The alerts' toasts expire on the wall clock: not part of what these pictures check.
    app.clear_notifications()
    await pilot.pause()


def test_pipeline_running_at_200x50(snap_compare: Any) -> None:
    """You should see run_7f3a9c in pretrain at 43% on a 200x50 terminal: a 64-column left
    column (stage list, pretrain's progress bar, step and ETA, the detail below it), charts
    four rows high filling the right side (loss, goodput, tokens/s/GPU, MFU, memory,
    interruptions, checkpoint GB/s, spend), the app's header and footer (Quit, Help, Runs)."""
    client = FakeClient(script=pretrain_script().events)
    assert snap_compare(run_app(client), terminal_size=SIZE, run_before=settle)


def test_pipeline_gate_failed_at_200x50(snap_compare: Any) -> None:
    """You should see the red GATE FAILED banner naming the mid-train gate; in the 64-column
    left column every stage's line whole (`passed … gate✓`, mid-train `FAILED … gate✗`) and
    the failing gate's results each `value ± stderr` on one line; charts four rows high."""
    client = FakeClient(script=gate_fail_script().events)
    assert snap_compare(run_app(client), terminal_size=SIZE, run_before=settle)
