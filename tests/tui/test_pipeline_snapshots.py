"""Snapshots of the run screens as the user gets them: `make_app` (the real CSS, bindings,
header and footer) over a fake backend's fixed run and a frozen clock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.client import ConnectionState
from ito_tui.contract import Proposal
from ito_tui.tui import ItoApp
from tests.support.apps import SIZE_IDS, SIZES, THEMES, settle, settle_quiet, snapshot_app

from .pipeline_fakes import (
    NOW,
    RUN_ID,
    FakeRunClient,
    gate_fail_script,
    pretrain_script,
    proposal_body,
    runs_list,
)
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


def on_tab(key: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A `run_before` that lets the script play out, then shows the pipeline tab `key`."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press(key)
        await settle_quiet(pilot)

    return run_before


def pipeline_app(client: FakeRunClient, **kw: Any) -> ItoApp:
    """The app opened on run_7f3a9c's pipeline."""
    return snapshot_app(client, now=NOW, start=RUN_ID, **kw)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_pipeline_running(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see run_7f3a9c in pretrain at 43%: data prep and plan passed, the ladder
    skipped, the pretrain progress bar with step, tokens and ETA, the other stages pending,
    the spend bar with its 80%/95% marks, DEMO and `live` in the header, and telemetry
    sparklines (loss, goodput, tokens/s/GPU, MFU, memory vs 80 GiB, interruptions,
    checkpoint GB/s, spend) each with its value and window min–max."""
    client = FakeRunClient(script=pretrain_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle_quiet)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_pipeline_gate_failed(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the red GATE FAILED banner naming the mid-train gate and its failing
    benchmarks (gsm8k, math), saying the run was stopped and cannot be overridden and that n
    starts a new run from this spec; the stage list with pretrain passed (gate✓) and
    mid-train FAILED (gate✗); under it the Run summary (gate failed: mid-train, no estimate:
    —); New run in the footer, no continue key."""
    client = FakeRunClient(script=gate_fail_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle_quiet)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_pipeline_event_log(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Events tab: its caption (times UTC, then filter all, f cycles,
    / searches, cut with … at 80 columns) and one line per event, newest last, each
    starting with its time (HH:MM:SS); at 120 columns also its seq and type
    (manifest.ready, plan.selected, checkpoint…), at 80 columns the summary alone, cut
    with … where it does not fit."""
    client = FakeRunClient(script=pretrain_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=on_tab("3"))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_pipeline_checkpoints_and_faults(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Ckpts tab (checkpoints and faults): Checkpoints (5), newest last,
    with step, GB, blocking and persist seconds and GB/s (at 120 columns also when each was
    saved, UTC, and the headers in words); then Faults (1): the node failure on gpu-node-07,
    its resume after 18 min marked as an SLO breach (⚠)."""
    client = FakeRunClient(script=pretrain_script().events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=on_tab("2"))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_pipeline_proposal_modal(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the restart proposal modal over the pipeline: NEEDS APPROVAL, the run
    is PAUSED, expires in 14m32s then rejected, why (loss spike at step 523, z 8.4, window
    128) with a loss sparkline, what (roll back to step 500, skip 300 batches, scale LR × 0.5),
    cost, who may decide, a comment field, and Decide later (focused) / Reject / Approve."""
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle_quiet)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
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
    client = FakeRunClient(script=pretrain_script(spike=True).events, conflict_with=other)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.click("#approve")
        await pilot.press(*"approve", "enter")
        await settle_quiet(pilot)

    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_pipeline_reconnecting(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the pipeline of a running pretrain with the header's connection state
    reading `reconnecting in 4 s` instead of live."""
    client = FakeRunClient(
        script=pretrain_script().events,
        final_state=ConnectionState(status="reconnecting", retry_in_s=4.0, attempt=2),
    )
    assert snap_compare(pipeline_app(client), terminal_size=size, run_before=settle_quiet)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_runs_list_pending(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see five runs with run_7f3a9c first and its highlighted `⚠ 1 to approve`
    badge, a running SFT run, a failed mid-train run marked `✗ gate failed` in the same
    column, a completed and a cancelled run, spend against budget, booking and last update
    for each (the whole table fits 120 columns), and the caption `1 waiting for approval`."""
    app = snapshot_app(FakeRunClient(summaries=runs_list()), now=NOW, start="runs")
    assert snap_compare(app, terminal_size=size, run_before=settle_quiet)


@pytest.mark.parametrize("theme", THEMES)
def test_pipeline_themes(snap_compare: Any, theme: str) -> None:
    """You should see the running pretrain pipeline drawn in the given shipped theme, with
    passed stages in the theme's gate-passed colour and the sparklines in its accent."""
    client = FakeRunClient(script=pretrain_script().events)
    app = pipeline_app(client, theme=theme)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_quiet)
