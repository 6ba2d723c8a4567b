"""The run summary (`state/summary.py`): a completed run, a failed gate, a cancelled run,
a run with a rollback and interruptions, and facts the backend did not send."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from ito_tui.commands.output import to_jsonable
from ito_tui.contract import Proposal, Run, TelemetrySample
from ito_tui.format import MISSING
from ito_tui.state import RunState
from ito_tui.state.summary import run_end
from ito_tui.state.summary_text import (
    against,
    estimate_rows,
    fact_rows,
    outcome_brief,
    summary_json,
    summary_rows,
)

T0 = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
ESTIMATE: dict[str, Any] = {
    "total_gpu_hours": 640.0,
    "wall_clock_h_p50": 10.0,
    "wall_clock_h_p90": 14.0,
    "usd_p50": "1600.00",
    "usd_p90": "2240.00",
    "fits_budget": True,
    "fits_booking_window": True,
    "expected_interruptions": 0.4,
}


def at(hours: float) -> str:
    return (T0 + timedelta(hours=hours)).isoformat()


def gate(stage: str, status: str, results: list[tuple[str, float, float, bool]]) -> dict[str, Any]:
    return {
        "gate_id": f"gate_{stage}",
        "stage": stage,
        "battery_id": f"{stage}-v1",
        "status": status,
        "results": [
            {"benchmark": b, "metric": "acc", "value": v, "threshold": t, "passed": ok}
            for b, v, t, ok in results
        ],
    }


def stage(name: str, state: str, start: float, end: float | None, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "state": state,
        "started_at": at(start),
        "ended_at": None if end is None else at(end),
        **extra,
    }


def run(state: str, stages: list[dict[str, Any]], **extra: Any) -> Run:
    body: dict[str, Any] = {
        "run_id": "run_1",
        "booking_id": "bk_1",
        "spec": {
            "booking_id": "bk_1",
            "model_size": "1.5B",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general",
            "budget_usd": "3000.00",
        },
        "state": state,
        "stages": stages,
        "spend": {
            "gpu_hours": 700.0,
            "usd_spent": "1750.00",
            "usd_committed": "1750.00",
            "budget_usd": "3000.00",
        },
        "estimate": ESTIMATE,
        "created_at": T0.isoformat(),
        "updated_at": at(12),
    }
    body.update(extra)
    return Run.model_validate(body)


def completed() -> Run:
    return run(
        "completed",
        [
            stage("data_prep", "passed", 0, 1),
            stage("pretrain", "passed", 1, 9, summary={"final_loss": 2.314, "steps": 1200},
                  gate=gate("pretrain", "passed", [("mmlu", 0.52, 0.45, True)])),
            stage("mid_train", "passed", 9, 11.5, summary={"final_loss": 2.2, "steps": 300}),
        ],
    )  # fmt: skip


def rows(r: Run, **kw: Any) -> dict[str, str]:
    end = run_end(RunState.from_run(r), **kw)
    assert end is not None
    return dict(summary_rows(end))


def test_a_running_run_has_no_summary() -> None:
    assert (
        run_end(RunState.from_run(run("running", [stage("pretrain", "running", 0, None)]))) is None
    )


def test_a_completed_run_against_its_estimate() -> None:
    end = run_end(RunState.from_run(completed()), proposals=[])
    assert end is not None and end.outcome == "completed"
    assert end.wall_s == 11.5 * 3600
    assert end.gpu_hours == 700.0 and end.gpu_hours_est == 640.0
    assert end.usd_spent == Decimal("1750.00") and end.usd_p50 == Decimal("1600.00")
    assert [(s.name, s.final_loss, s.steps) for s in end.stages] == [
        ("data_prep", None, None),
        ("pretrain", 2.314, 1200),
        ("mid_train", 2.2, 300),
    ]
    text = rows(completed(), proposals=[])
    assert text["outcome"] == "completed"
    assert text["wall time"] == "11h30m · est. p50 10h00m, p90 14h00m · p50–p90"
    assert text["GPU-hours"] == "700 · est. 640"
    assert text["cost"] == (
        "$1,750.00 of $3,000.00 budget · est. p50 $1,600.00, p90 $2,240.00 · p50–p90"
    )
    assert text["interruptions"] == "0" and text["rollbacks"] == "none"
    assert text["pretrain"] == "passed · loss 2.314 · 1,200 steps · gate passed (1 benchmarks)"
    assert text["data prep"] == "passed"
    # Stages that never ran (the ladder, post-training) are not listed.
    assert "ladder" not in text and "SFT" not in text


def failed_gate() -> Run:
    return run(
        "failed",
        [
            stage("pretrain", "passed", 0, 8, summary={"final_loss": 2.31}),
            stage("mid_train", "failed", 8, 9.5, gate=gate("mid_train", "failed", [
                ("mmlu", 0.55, 0.50, True), ("gsm8k", 0.31, 0.40, False)])),
        ],
        current_stage="mid_train",
        failure={"kind": "gate_failed", "gate_id": "gate_mid_train", "detail": "gsm8k"},
    )  # fmt: skip


def test_a_failed_gate_names_the_benchmark_and_by_how_much() -> None:
    sample = TelemetrySample.model_validate(
        {
            "seq": 40, "ts": at(9), "stage": "mid_train", "step": 300, "tokens_seen": 1,
            "loss": 2.25, "tokens_per_s_per_gpu": 1.0, "mem_max_reserved_gib": 1.0,
            "goodput": {"scheduling_frac": 1, "runtime_frac": 1, "program_frac": 1,
                        "ml_productivity_frac": 1},
            "spend_usd": "1700.00",
        }
    )  # fmt: skip
    end = run_end(RunState.from_run(failed_gate()), last_sample=sample)
    assert end is not None and end.outcome == "gate_failed"
    assert end.failed_gate is not None and end.failed_gate.gate_id == "gate_mid_train"
    text = dict(summary_rows(end))
    assert text["outcome"] == "stopped by a failed gate: the mid-train gate"
    # The stage stopped by its gate has no summary: its loss is the newest sample's.
    assert text["mid-train"] == (
        "FAILED · loss 2.25 · gate FAILED: gsm8k acc 0.31 (needs >= 0.4): short by 0.09"
    )
    assert text["pretrain"] == "passed · loss 2.31"
    # Proposals not had: rollbacks are not known, and say so.
    assert text["rollbacks"] == MISSING
    doc = summary_json(end)
    assert doc["failed_gate_id"] == "gate_mid_train"
    result = doc["stages"][1]["gate"]["results"][1]
    assert result["benchmark"] == "gsm8k" and math.isclose(result["gap"], 0.09)


def test_a_cancelled_run_closes_the_stage_it_cut() -> None:
    r = run(
        "cancelled",
        [stage("pretrain", "running", 0, None)],
        current_stage="pretrain",
        failure={"kind": "cancelled", "detail": "wrong data\x1b[2J"},
    )
    end = run_end(RunState.from_run(r))
    assert end is not None and end.outcome == "cancelled"
    text = dict(summary_rows(end))
    # The backend's words are shown, made safe (the escape is visible, never sent).
    assert text["outcome"].startswith("cancelled: wrong data") and "\x1b" not in text["outcome"]
    assert text["pretrain"].startswith("cancelled · loss —")
    # No stage ended: the wall time is not known.
    assert end.wall_s is None and text["wall time"].startswith(MISSING)


def proposal(pid: str, status: str, lost: int, kind: str = "rollback_and_skip") -> Proposal:
    return Proposal.model_validate(
        {
            "proposal_id": pid, "run_id": "run_1", "kind": kind, "status": status,
            "created_at": at(3), "expires_at": at(4),
            "trigger": {"reason": "loss spike", "step": 900},
            "action": {"rollback_to_step": 800, "skip_batches": 300},
            "impact": {"lost_steps": lost, "added_gpu_hours": 4.0, "added_usd": "10.00"},
            "run_paused": True,
        }
    )  # fmt: skip


def test_rollbacks_and_interruptions_with_their_lost_steps() -> None:
    faults = [
        {"fault_id": "f1", "kind": "node_failure", "recovered": True, "lost_steps": 120},
        {"fault_id": "f2", "kind": "hang", "recovered": True, "lost_steps": 40},
    ]
    r = completed().model_copy(update={"faults": Run.model_validate(
        {**completed().model_dump(mode="json"), "faults": faults}).faults})  # fmt: skip
    fetched = [
        proposal("p1", "executed", 100),
        proposal("p2", "rejected", 50),
        proposal("p3", "approved", 7, kind="reduce_lr"),
    ]
    end = run_end(RunState.from_run(r), proposals=fetched)
    assert end is not None
    assert end.interruptions == 2 and end.interruption_lost_steps == 160
    assert end.rollbacks is not None and [x.proposal_id for x in end.rollbacks] == ["p1"]
    text = dict(summary_rows(end))
    assert text["interruptions"] == "2 · 160 steps lost"
    assert text["rollbacks"] == "1: to step 800, 100 steps lost"


def test_missing_facts_are_shown_missing_never_invented() -> None:
    r = run(
        "completed",
        [
            stage("pretrain", "passed", 0, 2),
        ],
        estimate=None,
        faults=[{"fault_id": "f1", "kind": "node_failure", "recovered": True}],
    )
    end = run_end(RunState.from_run(r))
    assert end is not None
    assert end.usd_p50 is None and end.wall_h_p50 is None and end.gpu_hours_est is None
    assert end.interruption_lost_steps is None and end.rollbacks is None
    text = dict(summary_rows(end))
    assert text["wall time"] == "2h00m (no estimate)"
    assert text["GPU-hours"] == f"700 · est. {MISSING}"
    assert text["interruptions"] == f"1 · {MISSING} steps lost"
    assert text["pretrain"] == f"passed · loss {MISSING}"
    doc = json.loads(json.dumps(to_jsonable(summary_json(end)), allow_nan=False))
    assert doc["usd_p50"] is None and doc["rollbacks"] is None
    assert doc["interruption_lost_steps"] is None and doc["usd_spent"] == "1750.00"


def test_a_diverged_final_loss_is_data_and_json_stays_rfc_8259() -> None:
    r = run("completed", [stage("pretrain", "passed", 0, 2, summary={"final_loss": "NaN"})])
    end = run_end(RunState.from_run(r))
    assert end is not None and math.isnan(end.stages[0].final_loss or 0.0)
    assert dict(summary_rows(end))["pretrain"] == "passed · loss NaN"
    text = json.dumps(to_jsonable(summary_json(end)), allow_nan=False)
    assert json.loads(text)["stages"][0]["final_loss"] == "NaN"


def test_against_the_estimate() -> None:
    assert against(1, 2, 3) == "under p50"
    assert against(Decimal("2.5"), Decimal(2), Decimal(3)) == "p50–p90"
    assert against(4.0, 2, 3) == "over p90"
    assert against(None, 2, 3) is None and against(1, None, 3) is None
    assert against(math.nan, 2, 3) is None


def test_the_panel_rows_are_narrow_and_say_by_how_much_a_gate_missed() -> None:
    end = run_end(RunState.from_run(failed_gate()), proposals=[])
    assert end is not None
    assert outcome_brief(end) == "gate failed: mid-train"
    table = {label: rest for label, *rest in estimate_rows(end)}
    assert table["cost"] == ["$1.8K", "$1.6K–$2.2K", "p50–p90"]
    assert table["wall time"] == ["9h30m", "10h00m–14h00m", "under p50"]
    facts = dict(fact_rows(end))
    assert facts["rollbacks"] == "none" and facts["interrupts"] == "0"
    assert facts["mid-train"] == "FAILED · loss — · gate✗ gsm8k short by 0.09"
    assert facts["pretrain"] == "loss 2.31"


def test_the_panel_table_without_an_estimate_says_so_once() -> None:
    r = run("completed", [stage("pretrain", "passed", 0, 2)], estimate=None)
    end = run_end(RunState.from_run(r))
    assert end is not None
    assert [row[2] for row in estimate_rows(end)] == [MISSING, MISSING, MISSING]
