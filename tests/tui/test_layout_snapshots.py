"""Snapshots of the real app (make_app: its CSS, bindings, header and footer) at 200x50:
the layout uses the space of a big terminal (wider left column, taller charts); and the runs
list at 80x24, where what identifies a run always shows."""

from __future__ import annotations

from typing import Any

from tests.support.apps import settle_quiet, snapshot_app

from .pipeline_fakes import (
    NOW,
    RUN_ID,
    FakeRunClient,
    gate_fail_script,
    pretrain_script,
    runs_list,
)
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

SIZE = (200, 50)


def test_pipeline_running_at_200x50(snap_compare: Any) -> None:
    """You should see run_7f3a9c in pretrain at 43% on a 200x50 terminal: a 64-column left
    column (stage list, pretrain's progress bar, step and ETA, the detail below it), charts
    four rows high filling the right side (loss, goodput, tokens/s/GPU, MFU, memory,
    interruptions, checkpoint GB/s, spend), the app's header and footer (Quit, Help, Runs)."""
    client = FakeRunClient(script=pretrain_script().events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=SIZE, run_before=settle_quiet)


def test_pipeline_gate_failed_at_200x50(snap_compare: Any) -> None:
    """You should see the red GATE FAILED banner naming the mid-train gate; in the 64-column
    left column every stage's line whole (`passed … gate✓`, mid-train `FAILED … gate✗`) and
    the failing gate's results each `value ± stderr` on one line, under the Run summary
    (its facts one line each, a failed gate's misses wrapped under their column); charts
    four rows high."""
    client = FakeRunClient(script=gate_fail_script().events)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=SIZE, run_before=settle_quiet)


def test_runs_list_at_80x24(snap_compare: Any) -> None:
    """You should see, on an 80x24 terminal, every run's id, state, spend (`$8.5K / $25.0K`)
    and booking (`bk_h100_32n_ib_reserved_…`, cut at 24 past its `bk_`) with nothing sideways;
    the waiting run first with `⚠ 1 to approve` in its state cell, a failed one with
    `✗ gate failed`; the stage where there is room; the footer's Quit and Help whole."""
    runs = runs_list()
    runs[0] = runs[0].model_copy(update={"booking_id": "bk_h100_32n_ib_reserved_eval"})
    app = snapshot_app(FakeRunClient(summaries=runs), now=NOW, start="runs")
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_quiet)
