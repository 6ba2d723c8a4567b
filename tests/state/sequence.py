"""A realistic event sequence of one run, built with `make_event` (shared by the state tests)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ito_tui.contract import EventBase, make_event

RUN_ID = "run_test1"
T0 = datetime(2026, 11, 1, tzinfo=UTC)

PLAN: dict[str, Any] = {
    "world_size": 64,
    "dp_replicate": 1,
    "dp_shard": 64,
    "tp": 1,
    "pp": 1,
    "cp": 1,
    "precision": "bf16",
    "activation_checkpoint": "selective",
    "compile": True,
    "fault_tolerance": "torchft_hsdp",
    "local_batch_seqs": 2,
    "global_batch_tokens": 1_048_576,
    "est_mem_per_gpu_gib": 61.5,
    "hbm_per_gpu_gib": 80.0,
    "est_tokens_per_s_per_gpu": 7800.0,
    "est_mfu_frac": 0.38,
}


def telemetry_data(
    seq: int, step: int, *, stage: str = "pretrain", loss: float = 2.5
) -> dict[str, Any]:
    """A TelemetrySample payload."""
    return {
        "seq": seq,
        "ts": (T0 + timedelta(seconds=seq)).isoformat(),
        "stage": stage,
        "step": step,
        "tokens_seen": step * 1_048_576,
        "loss": loss,
        "loss_z": 0.2,
        "grad_norm": 1.1,
        "lr": 3e-4,
        "tokens_per_s_per_gpu": 7800.0,
        "mfu_frac": 0.37,
        "mem_max_reserved_gib": 61.0,
        "goodput": {
            "scheduling_frac": 1.0,
            "runtime_frac": 0.97,
            "program_frac": 0.9,
            "ml_productivity_frac": 0.87,
            "badput_s": {"checkpoint": 5.0},
        },
        "interruptions_total": 0,
        "interruptions_per_1k_gpu_hours": 0.0,
        "checkpoint": {"last_step": 100, "size_gb": 96.0, "write_gb_per_s": 3.1},
        "spend_usd": f"{seq * 1.5:.2f}",
    }


def gate(stage: str, status: str, *, passed: bool = True, results: int = 1) -> dict[str, Any]:
    return {
        "gate_id": f"gate_{stage}",
        "stage": stage,
        "battery_id": f"battery_{stage}",
        "status": status,
        "results": [
            {
                "benchmark": f"bench{i}",
                "metric": "acc",
                "value": 0.61 if passed else 0.2,
                "stderr": 0.01,
                "threshold": 0.5,
                "comparator": ">=",
                "rule": "absolute",
                "passed": passed,
            }
            for i in range(results)
        ],
    }


def proposal(
    status: str, *, pid: str = "prop_1", kind: str = "rollback_and_skip"
) -> dict[str, Any]:
    return {
        "proposal": {
            "proposal_id": pid,
            "run_id": RUN_ID,
            "kind": kind,
            "status": status,
            "created_at": T0.isoformat(),
            "expires_at": (T0 + timedelta(hours=1)).isoformat(),
            "trigger": {"reason": "loss spike z=7.2", "step": 260, "loss": 4.1, "loss_z": 7.2},
            "action": {"rollback_to_step": 200, "checkpoint_id": "ckpt_2", "skip_batches": 300},
            "impact": {"lost_steps": 60, "added_gpu_hours": 12.0, "added_usd": "30.00"},
            "decided_by": None if status == "pending" else "alice",
        }
    }


def spend(usd: str = "100.00") -> dict[str, Any]:
    return {"gpu_hours": 40.0, "usd_spent": usd, "usd_committed": usd, "budget_usd": "30000.00"}


def run_snapshot(state: str = "running", last_seq: int = 0, **extra: Any) -> dict[str, Any]:
    """A Run payload (resync / from_run)."""
    return {
        "run_id": RUN_ID,
        "booking_id": "bk_1",
        "spec": {
            "booking_id": "bk_1",
            "model_size": "8B",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general",
            "budget_usd": "30000.00",
        },
        "state": state,
        "plan": PLAN,
        "stages": [],
        "current_stage": "pretrain",
        "spend": spend(),
        "last_event_seq": last_seq,
        "created_at": T0.isoformat(),
        "updated_at": T0.isoformat(),
        **extra,
    }


def showcase() -> list[EventBase]:
    """Stages, data summaries, plan, telemetry, a fault, a spike, a rollback, gates, completion."""
    raw: list[tuple[str, dict[str, Any]]] = [
        ("run.accepted", {"booking_id": "bk_1", "state": "queued", "plan": PLAN}),
        ("run.state_changed", {"from_state": "queued", "to_state": "running"}),
        ("stage.started", {"stage": "data_prep"}),
        ("data.manifest_ready", {"documents": 1000, "tokens": 10**9, "shards": 8}),
        (
            "data.dedup_completed",
            {"documents_before": 1000, "documents_after": 900, "removed_frac": 0.1},
        ),
        ("data.decontam_completed", {"per_benchmark": {"mmlu": 3}, "removed_documents": 3}),
        ("stage.completed", {"stage": "data_prep", "summary": {"documents": 897}}),
        ("stage.skipped", {"stage": "ladder", "reason": "curated data"}),
        ("stage.started", {"stage": "plan"}),
        ("plan.selected", {"plan": PLAN}),
        ("plan.warning", {"code": "plan.tight_memory", "message": "61.5 of 80 GiB"}),
        ("stage.completed", {"stage": "plan"}),
        ("stage.started", {"stage": "pretrain", "total_steps": 1000}),
    ]
    step = 0
    for _ in range(30):
        step += 10
        raw.append(("telemetry", {"__step": step}))
    raw += [
        (
            "stage.progress",
            {"stage": "pretrain", "progress": {"step": 300, "total_steps": 1000, "frac": 0.3}},
        ),
        (
            "checkpoint.saved",
            {
                "checkpoint": {
                    "checkpoint_id": "ckpt_2",
                    "stage": "pretrain",
                    "step": 200,
                    "created_at": T0.isoformat(),
                    "size_gb": 96.0,
                    "blocking_s": 5.0,
                    "persist_s": 30.0,
                }
            },
        ),
        (
            "fault.detected",
            {
                "fault_id": "f1",
                "kind": "node_failure",
                "node": "n3",
                "step": 300,
                "detected_after_s": 120.0,
            },
        ),
        ("run.state_changed", {"from_state": "running", "to_state": "recovering"}),
        (
            "fault.recovered",
            {
                "fault_id": "f1",
                "kind": "node_failure",
                "resumed_after_s": 960.0,
                "lost_steps": 40,
                "resumed_from_step": 260,
            },
        ),
        ("slo.breached", {"slo": "resume", "fault_id": "f1", "value_s": 960.0, "limit_s": 900.0}),
        ("loss.spike_detected", {"step": 250, "loss": 3.9, "loss_z": 6.3, "action": "skipped"}),
        ("loss.spike_detected", {"step": 260, "loss": 4.1, "loss_z": 7.2, "action": "escalated"}),
        ("proposal.created", proposal("pending")),
        ("run.state_changed", {"from_state": "running", "to_state": "awaiting_approval"}),
        ("proposal.approved", proposal("approved")),
        ("proposal.executed", proposal("executed")),
        ("run.state_changed", {"from_state": "awaiting_approval", "to_state": "running"}),
        ("telemetry", {"__step": 200}),
        ("telemetry", {"__step": 210}),
        (
            "budget.warning",
            {"threshold_frac": 0.5, "usd_spent": "15000.00", "budget_usd": "30000.00"},
        ),
        ("checkpoint.failed", {"step": 210, "reason": "storage timeout"}),
        ("stage.completed", {"stage": "pretrain"}),
        ("gate.started", {"gate": gate("pretrain", "running", results=0)}),
        (
            "gate.result",
            {"gate_id": "gate_pretrain", "result": gate("pretrain", "running")["results"][0]},
        ),
        ("gate.passed", {"gate": gate("pretrain", "passed")}),
        ("totally.new_event", {"hello": "\x1b[31mworld"}),
        ("stage.started", {"stage": "mid_train", "total_steps": 100}),
        ("stage.failed", {"stage": "long_context", "reason": "not requested"}),
        ("proposal.created", proposal("pending", pid="prop_2", kind="extend_budget")),
        ("proposal.expired", proposal("expired", pid="prop_2", kind="extend_budget")),
        ("gate.started", {"gate": gate("mid_train", "running", results=0)}),
        ("gate.failed", {"gate": gate("mid_train", "failed", passed=False)}),
        (
            "run.failed",
            {
                "spend": spend("16000.00"),
                "failure": {"kind": "gate_failed", "gate_id": "gate_mid_train", "detail": "x"},
                "detail": "mid_train gate failed",
            },
        ),
    ]
    events: list[EventBase] = []
    for seq, (type_, data) in enumerate(raw, start=1):
        if "__step" in data:
            data = telemetry_data(seq, data["__step"])
        events.append(
            make_event(
                type_,
                seq=seq,
                run_id=RUN_ID,
                ts=T0 + timedelta(seconds=seq),
                sim_ts=T0 + timedelta(seconds=60 * seq),
                data=data,
            )
        )
    return events


FAILING = "b200-16n-ib-03"
SPARE = "b200-16n-ib-spare-01"


def node_failure_chain(first_seq: int = 1) -> list[EventBase]:
    """The fleet's part of a node failure as desk_sim streams it: a straggler that grows,
    the node fails, the quorum shrinks, the spare replaces it, the quorum grows back."""
    raw: list[tuple[str, dict[str, Any]]] = [
        ("quorum.changed", {"quorum_id": 6, "participants": 4, "min_replicas": 2}),
        (
            "straggler.detected",
            {"hostname": FAILING, "rank": 17, "step_time_s": 1.52, "fleet_p50_s": 1.11},
        ),
        ("node.degraded", {"hostname": FAILING, "replica_id": "r2", "reason": "GPU 3 at 91 C"}),
        ("node.failed", {"hostname": FAILING, "replica_id": "r2", "fault_id": "f_12"}),
        ("quorum.changed", {"quorum_id": 7, "participants": 3, "min_replicas": 2}),
        (
            "node.replaced",
            {"hostname": FAILING, "replica_id": "r2", "replaced_by": SPARE, "fault_id": "f_12"},
        ),
        ("quorum.changed", {"quorum_id": 8, "participants": 4, "min_replicas": 2}),
    ]
    return [
        make_event(
            type_,
            seq=seq,
            run_id=RUN_ID,
            ts=T0 + timedelta(seconds=seq),
            sim_ts=T0 + timedelta(seconds=60 * seq),
            data=data,
        )
        for seq, (type_, data) in enumerate(raw, start=first_seq)
    ]
