"""Snapshots of the run screens with deterministic data (fake client, frozen clock)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.contract import Proposal
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.runs import RunsScreen

from .pipeline_fakes import (
    RUN_ID,
    FakeClient,
    StreamState,
    gate_fail_script,
    pretrain_script,
    proposal_body,
    runs_list,
)
from .pipeline_harness import RunScreensHarness

SIZES = [(80, 24), (120, 40)]
THEMES = ["ito-dark", "ito-light", "ito-high-contrast", "ito-ansi"]


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until every scripted event is applied and the coalesced repaints have run."""
    app = pilot.app
    for _ in range(100):
        await pilot.pause(0.05)
        screens = [s for s in app.screen_stack if isinstance(s, PipelineScreen)]
        if not screens:
            break
        screen = screens[0]
        client = app.client  # type: ignore[attr-defined]
        done = screen.tracker.last_seq >= len(client.script)
        if done and not screen.repaints.pending:
            break
    await pilot.pause(0.6)


def on_tab(key: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A `run_before` that lets the script play out, then shows the pipeline tab `key`."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press(key)
        await pilot.pause(0.6)

    return run_before


def pipeline_app(client: FakeClient, **kw: Any) -> RunScreensHarness:
    return RunScreensHarness(client, PipelineScreen(RUN_ID), **kw)


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_running(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see run_7f3a9c in pretrain at 43%: data prep and plan passed, the ladder
    skipped, the pretrain progress bar with step, tokens and ETA, the other stages pending,
    the spend bar with its 80%/95% marks, DEMO and `live` in the header, and telemetry
    sparklines (loss, goodput, tokens/s/GPU, MFU, memory vs 80 GiB, interruptions,
    checkpoint GB/s, spend) each with its value and window min–max."""
    client = FakeClient(script=pretrain_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_gate_failed(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the red GATE FAILED banner naming the mid-train gate and its failing
    benchmarks (gsm8k, math), saying the run was stopped and cannot be overridden; the
    stage list with pretrain passed (gate✓) and mid-train FAILED (gate✗); no continue key."""
    client = FakeClient(script=gate_fail_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_event_log(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Events tab: its caption (times UTC, then filter all, f cycles,
    / searches, cut with … at 80 columns) and one line per event, newest last, each
    starting with its time (HH:MM:SS); at 120 columns also its seq and type
    (manifest.ready, plan.selected, checkpoint…), at 80 columns the summary alone, cut
    with … where it does not fit."""
    client = FakeClient(script=pretrain_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=on_tab("3"))


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_checkpoints_and_faults(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Ckpts & faults tab: Checkpoints (5), newest last, with step, GB,
    blocking and persist seconds and GB/s (at 120 columns also when each was saved, UTC,
    and the headers in words); then Faults (1): the node failure on gpu-node-07, its
    resume after 18 min marked as an SLO breach (⚠)."""
    client = FakeClient(script=pretrain_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=on_tab("2"))


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_proposal_modal(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the restart proposal modal over the pipeline: NEEDS APPROVAL, the run
    is PAUSED, expires in 14m32s then rejected, why (loss spike at step 523, z 8.4, window
    128) with a loss sparkline, what (roll back to step 500, skip 300 batches, scale LR × 0.5),
    cost, who may decide, a comment field, and Decide later (focused) / Reject / Approve."""
    client = FakeClient(script=pretrain_script(spike=True).events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_proposal_decided_elsewhere(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the modal saying the proposal was already decided by someone else:
    REJECTED by bob with his comment, your decision not sent, and only Close left."""
    other = Proposal.model_validate(
        proposal_body(
            "rejected",
            decided_by="bob",
            decided_at="2026-11-29T23:01:10Z",
            comment="spike was a bad shard; skip it ourselves",
        )
    )
    client = FakeClient(script=pretrain_script(spike=True).events, conflict_with=other)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.click("#approve")
        await pilot.press(*"approve", "enter")
        await pilot.pause(0.3)

    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_reconnecting(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the pipeline of a running pretrain with the header's connection state
    reading `reconnecting in 4 s` instead of live."""
    client = FakeClient(
        script=pretrain_script().events,
        final_state=StreamState(status="reconnecting", retry_in_s=4.0, attempt=2),
    )
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_runs_list_pending(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see five runs with run_7f3a9c first and its highlighted `⚠ 1 to approve`
    badge, a running SFT run, a failed mid-train run marked `✗ gate failed` in the same
    column, a completed and a cancelled run, spend against budget, booking and last update
    for each (the whole table fits 120 columns), and the caption `1 waiting for approval`."""
    client = FakeClient(summaries=runs_list())
    app = RunScreensHarness(client, RunsScreen())
    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("theme", THEMES)
def test_pipeline_themes(snap_compare: Any, theme: str) -> None:
    """You should see the running pretrain pipeline drawn in the given shipped theme, with
    passed stages in the theme's gate-passed colour and the sparklines in its accent."""
    client = FakeClient(script=pretrain_script().events)
    app = pipeline_app(client, theme=theme)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)
