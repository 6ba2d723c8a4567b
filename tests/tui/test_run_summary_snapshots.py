"""Snapshots of the run screen once the run has ended: its summary panel above the stage
detail, under the stage list, at 80x24 and 120x40 (`make_app`, a fake backend's fixed
run, a frozen clock)."""

from __future__ import annotations

from typing import Any

import pytest

from ito_tui.contract import Proposal
from tests.support.apps import SIZE_IDS, SIZES, settle_quiet, snapshot_app

from .pipeline_fakes import (
    NOW,
    RUN_ID,
    FakeRunClient,
    Script,
    gate,
    gate_fail_script,
    pretrain_script,
    proposal_body,
    run_snapshot,
    spend,
)
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

ESTIMATE: dict[str, Any] = {
    "total_gpu_hours": 6400.0,
    "wall_clock_h_p50": 1.2,
    "wall_clock_h_p90": 1.6,
    "usd_p50": "16000.00",
    "usd_p90": "22400.00",
    "fits_budget": True,
    "fits_booking_window": True,
    "expected_interruptions": 0.4,
}


def completed_script() -> Script:
    """Pretrain to its end with the node failure (40 steps lost), its gate passed, the run
    completed (its executed rollback is in the backend's proposals: `ROLLBACK`)."""
    s = pretrain_script(up_to_step=1200)
    s.add(
        "stage.completed",
        {"stage": "pretrain", "summary": {"final_loss": 2.131, "steps": 1200}},
        stage="pretrain",
    )
    s.add("gate.started", {"gate": gate("pretrain", "running", [])})
    results = [("mmlu", 0.52, 0.45, True), ("hellaswag", 0.71, 0.65, True)]
    s.add("gate.passed", {"gate": gate("pretrain", "passed", results)})
    s.add("run.completed", {"spend": spend("18240.00"), "detail": "all stages done"})
    return s


ROLLBACK = Proposal.model_validate(proposal_body("executed"))
"""A rollback approved (and carried out) before the screen opened: only the run's proposals
list has it."""


def ended_app(script: Script, proposals: list[Proposal] | None = None) -> Any:
    client = FakeRunClient(
        script=script.events, run_model=run_snapshot(estimate=ESTIMATE), pending=proposals or []
    )
    return snapshot_app(client, now=NOW, start=RUN_ID)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_run_summary_completed(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see run_7f3a9c ENDED: completed, the stage list whole, and under it the
    Run summary (n: new run from this spec): completed; actual against the estimate (wall
    time, GPU-hours 7,296 · est. 6,400, cost $18.2K against $16.0K–$22.4K, budget $25.0K;
    at 120 columns where each fell, e.g. `p50–p90`); interruptions 1 · 40 steps lost;
    rollbacks 1: to step 500, 23 steps lost; pretrain loss 2.131 · gate✓; no Cancel run
    in the footer but New run."""
    app = ended_app(completed_script(), [ROLLBACK])
    assert snap_compare(app, terminal_size=size, run_before=settle_quiet)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_run_summary_gate_failed(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the GATE FAILED banner (start a new run … n: a new run from this
    spec), the stage list with mid-train FAILED, and the Run summary under it: stopped by
    a failed gate: the mid-train gate; the estimate table; mid-train FAILED · loss …
    · gate✗ gsm8k short by 0.09, math short by 0.06."""
    app = ended_app(gate_fail_script())
    assert snap_compare(app, terminal_size=size, run_before=settle_quiet)


def test_run_summary_ito_ansi(snap_compare: Any) -> None:
    """You should see the completed run's summary at 80x24 in the 16-colour `ito-ansi`
    theme: the heading bold, the table's header and the facts' labels dim, nothing that
    needs more than the terminal's own colours to read."""
    client = FakeRunClient(
        script=completed_script().events,
        run_model=run_snapshot(estimate=ESTIMATE),
        pending=[ROLLBACK],
    )
    app = snapshot_app(client, now=NOW, start=RUN_ID, theme="ito-ansi")
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_quiet)
