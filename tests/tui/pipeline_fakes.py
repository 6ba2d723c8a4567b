"""Deterministic data for the run screens' tests: run_7f3a9c's snapshot, scripted events
(a pretrain with telemetry, checkpoints and a fault; a spike and its proposal; a failed
gate), the runs list, and `FakeRunClient`, the support fake over them (no network).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ito_tui.contract import EventBase, Run, RunSummary, make_event
from tests.state.sequence import PLAN as SEQUENCE_PLAN
from tests.support.fakes import FakeClient

RUN_ID = "run_7f3a9c"
BOOKING_ID = "bk_h100_0421"
T0 = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=3)

PLAN: dict[str, Any] = {
    **SEQUENCE_PLAN,
    "rationale": [
        "8B fits in 80 GiB with FSDP over 64 GPUs; TP not needed",
        "selective activation checkpointing keeps memory under 80%",
    ],
}


def spend(usd: str, budget: str = "25000.00") -> dict[str, Any]:
    return {
        "gpu_hours": float(usd) / 2.5,
        "usd_spent": usd,
        "usd_committed": usd,
        "budget_usd": budget,
    }


def run_snapshot(**extra: Any) -> Run:
    body: dict[str, Any] = {
        "run_id": RUN_ID,
        "booking_id": BOOKING_ID,
        "spec": {
            "booking_id": BOOKING_ID,
            "model_size": "8B",
            "data_ref": "catalog://fineweb-edu@2024-10",
            "target_capability": "general-chat",
            "budget_usd": "25000.00",
        },
        "state": "queued",
        "spend": spend("0.00"),
        "last_event_seq": 0,
        "created_at": T0.isoformat(),
        "updated_at": T0.isoformat(),
        "operator": "alice",
    }
    body.update(extra)
    return Run.model_validate(body)


def sample(
    seq: int, step: int, t: datetime, loss: float, stage: str = "pretrain"
) -> dict[str, Any]:
    return {
        "seq": seq,
        "ts": t.isoformat(),
        "stage": stage,
        "step": step,
        "tokens_seen": step * 1_048_576,
        "loss": loss,
        "loss_z": 0.3,
        "grad_norm": 1.0 + 0.1 * math.sin(step / 40),
        "lr": 3e-4,
        "tokens_per_s_per_gpu": 7600.0 + 300 * math.sin(step / 25),
        "mfu_frac": 0.36 + 0.02 * math.sin(step / 30),
        "mem_max_reserved_gib": 61.0 + 2 * math.sin(step / 50),
        "goodput": {
            "scheduling_frac": 1.0,
            "runtime_frac": 0.97 - (0.1 if 380 < step < 420 else 0.0),
            "program_frac": 0.9,
            "ml_productivity_frac": 0.86 - (0.12 if 380 < step < 420 else 0.0),
        },
        "interruptions_total": 1 if step > 400 else 0,
        "interruptions_per_1k_gpu_hours": 0.0 if step <= 400 else 2.4,
        "checkpoint": {
            "last_step": step - step % 100,
            "size_gb": 96.0,
            "write_gb_per_s": 3.1 + 0.4 * math.sin(step / 60),
        },
        "spend_usd": f"{2000 + step * 12.5:.2f}",
    }


def loss_at(step: int) -> float:
    return 2.1 + 2.6 * math.exp(-step / 180) + 0.04 * math.sin(step / 7)


def gate(stage: str, status: str, results: list[tuple[str, float, float, bool]]) -> dict[str, Any]:
    return {
        "gate_id": f"gate_{stage}_01",
        "stage": stage,
        "battery_id": f"{stage}-general-v3",
        "status": status,
        "results": [
            {
                "benchmark": b,
                "metric": "acc",
                "value": v,
                "stderr": 0.012,
                "threshold": th,
                "comparator": ">=",
                "rule": "absolute",
                "reference_value": th + 0.02,
                "passed": ok,
            }
            for b, v, th, ok in results
        ],
    }


class Script:
    """Builds an event list with increasing seq and time."""

    def __init__(self) -> None:
        self.events: list[EventBase] = []
        self.t = T0

    def add(
        self, type_: str, data: dict[str, Any], *, dt: float = 60.0, stage: str | None = None
    ) -> None:
        self.t += timedelta(seconds=dt)
        self.events.append(
            make_event(
                type_,
                seq=len(self.events) + 1,
                run_id=RUN_ID,
                ts=self.t.isoformat(),
                data=data,
                stage=stage,
            )
        )


def pretrain_script(*, up_to_step: int = 520, spike: bool = False) -> Script:
    """A run through data prep, ladder and plan into pretrain with telemetry."""
    s = Script()
    s.add("run.accepted", {"booking_id": BOOKING_ID, "state": "queued"})
    s.add("run.state_changed", {"from_state": "queued", "to_state": "running"})
    s.add("stage.started", {"stage": "data_prep"}, stage="data_prep")
    s.add(
        "data.manifest_ready", {"documents": 41_200_000, "tokens": 160_000_000_000, "shards": 2048}
    )
    s.add(
        "data.dedup_completed",
        {"documents_before": 41_200_000, "documents_after": 37_900_000, "removed_frac": 0.08},
    )
    s.add(
        "data.decontam_completed",
        {"per_benchmark": {"mmlu": 112, "gsm8k": 37, "humaneval": 4}, "removed_documents": 153},
    )
    s.add("stage.completed", {"stage": "data_prep"}, stage="data_prep")
    s.add("stage.skipped", {"stage": "ladder", "reason": "curated data"}, stage="ladder")
    s.add("stage.started", {"stage": "plan"}, stage="plan")
    s.add("plan.selected", {"plan": PLAN})
    s.add("stage.completed", {"stage": "plan"}, stage="plan")
    s.add(
        "stage.started",
        {"stage": "pretrain", "total_steps": 1200, "total_tokens": 1200 * 1_048_576},
        stage="pretrain",
    )
    for step in range(10, up_to_step + 1, 10):
        seq = len(s.events) + 1
        s.add("telemetry", sample(seq, step, s.t + timedelta(seconds=30), loss_at(step)), dt=30)
        if step % 100 == 0:
            s.add(
                "checkpoint.saved",
                {
                    "checkpoint": {
                        "checkpoint_id": f"ckpt_{step:05d}",
                        "stage": "pretrain",
                        "step": step,
                        "created_at": s.t.isoformat(),
                        "size_gb": 96.0,
                        "blocking_s": 4.8,
                        "persist_s": 31.0,
                    },
                    "write_gb_per_s": 3.1,
                },
                dt=5,
            )
        if step == 400:
            s.add(
                "fault.detected",
                {
                    "fault_id": "f1",
                    "kind": "node_failure",
                    "node": "gpu-node-07",
                    "step": 400,
                    "detected_after_s": 95.0,
                },
                dt=5,
            )
            s.add(
                "fault.recovered",
                {
                    "fault_id": "f1",
                    "kind": "node_failure",
                    "node": "gpu-node-07",
                    "resumed_after_s": 1080.0,
                    "lost_steps": 40,
                    "resumed_from_step": 400,
                },
                dt=5,
            )
            s.add(
                "slo.breached",
                {"slo": "resume", "fault_id": "f1", "value_s": 1080.0, "limit_s": 900.0},
                dt=1,
            )
        if step % 40 == 0:
            s.add(
                "stage.progress",
                {
                    "stage": "pretrain",
                    "progress": {
                        "step": step,
                        "total_steps": 1200,
                        "tokens": step * 1_048_576,
                        "total_tokens": 1200 * 1_048_576,
                        "frac": step / 1200,
                        "eta_s": (1200 - step) * 30.0,
                    },
                },
                dt=1,
            )
    if spike:
        s.add(
            "loss.spike_detected",
            {
                "step": up_to_step + 3,
                "loss": 7.9,
                "loss_z": 8.4,
                "window": 128,
                "action": "escalated",
            },
            dt=5,
        )
        s.add("proposal.created", {"proposal": proposal_body()}, dt=1)
        s.add("run.state_changed", {"from_state": "running", "to_state": "awaiting_approval"}, dt=1)
    return s


def proposal_body(status: str = "pending", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "proposal_id": "prop_91c2",
        "run_id": RUN_ID,
        "kind": "rollback_and_skip",
        "status": status,
        "created_at": NOW.isoformat(),
        "expires_at": (NOW + timedelta(minutes=14, seconds=32)).isoformat(),
        "on_expiry": "reject",
        "trigger": {"reason": "loss spike", "step": 523, "loss": 7.9, "loss_z": 8.4, "window": 128},
        "action": {
            "rollback_to_step": 500,
            "checkpoint_id": "ckpt_00500",
            "skip_batches": 300,
            "lr_scale": 0.5,
        },
        "impact": {"lost_steps": 23, "added_gpu_hours": 12.4, "added_usd": "31.00"},
        "run_paused": True,
    }
    body.update(extra)
    return body


def gate_fail_script() -> Script:
    s = pretrain_script(up_to_step=1200)
    s.add("stage.completed", {"stage": "pretrain"}, stage="pretrain")
    s.add("gate.started", {"gate": gate("pretrain", "running", [])})
    s.add(
        "gate.passed",
        {
            "gate": gate(
                "pretrain", "passed", [("mmlu", 0.52, 0.45, True), ("hellaswag", 0.71, 0.65, True)]
            )
        },
    )
    s.add("stage.started", {"stage": "mid_train", "total_steps": 300}, stage="mid_train")
    s.add("stage.completed", {"stage": "mid_train"}, stage="mid_train")
    s.add(
        "gate.failed",
        {
            "gate": gate(
                "mid_train",
                "failed",
                [
                    ("mmlu", 0.55, 0.50, True),
                    ("gsm8k", 0.31, 0.40, False),
                    ("math", 0.12, 0.18, False),
                ],
            )
        },
    )
    s.add(
        "stage.failed",
        {"stage": "mid_train", "reason": "gate failed", "gate_id": "gate_mid_train_01"},
        stage="mid_train",
    )
    s.add(
        "run.failed",
        {
            "failure": {
                "kind": "gate_failed",
                "gate_id": "gate_mid_train_01",
                "detail": "mid_train gate failed: gsm8k, math",
            },
            "spend": spend("17480.00"),
            "detail": "gate failed",
        },
    )
    return s


@dataclass(kw_only=True)
class FakeRunClient(FakeClient):
    """`FakeClient` over run_7f3a9c (queued at T0, before any event) at NOW: give it a
    `script` of events, `summaries` for the runs list, `pending` proposals."""

    run_model: Run | None = field(default_factory=run_snapshot)
    now: datetime = NOW


def summary(
    run_id: str,
    state: str,
    stage: str | None,
    frac: float | None,
    spent: str,
    *,
    pending: int = 0,
    gate_failed: bool = False,
    minutes: int = 0,
) -> RunSummary:
    body: dict[str, Any] = {
        "run_id": run_id,
        "booking_id": BOOKING_ID,
        "state": state,
        "current_stage": stage,
        "stage_progress_frac": frac,
        "spend": spend(spent),
        "pending_proposal_ids": [f"prop_{run_id[-4:]}_{i}" for i in range(pending)],
        "model_size": "8B",
        "created_at": T0.isoformat(),
        "updated_at": (NOW - timedelta(minutes=minutes)).isoformat(),
    }
    if gate_failed:
        body["failure"] = {
            "kind": "gate_failed",
            "gate_id": "gate_mid_train_01",
            "detail": "mid_train gate failed",
        }
    return RunSummary.model_validate(body)


def runs_list() -> list[RunSummary]:
    return [
        summary("run_7f3a9c", "awaiting_approval", "pretrain", 0.43, "8500.00", pending=1),
        summary("run_5b21e0", "running", "sft", 0.71, "19320.50", minutes=1),
        summary(
            "run_3c9d11", "failed", "mid_train", None, "17480.00", gate_failed=True, minutes=90
        ),
        summary("run_1a0f42", "completed", "rlvr", None, "23110.00", minutes=600),
        summary("run_0e7b33", "cancelled", "pretrain", None, "1210.00", minutes=1440),
    ]
