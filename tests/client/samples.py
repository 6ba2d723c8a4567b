"""Minimal valid wire bodies of the contract's resources, for the hostile server to serve."""

from __future__ import annotations

from typing import Any

TS = "2026-11-29T12:00:00.000Z"


def booking(booking_id: str = "bk_1") -> dict[str, Any]:
    return {
        "booking_id": booking_id,
        "status": "completed",
        "gpu_sku": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "node_count": 2,
        "ssh": {"user": "ito"},
        "fabric": {"kind": "infiniband", "gbit_per_s_per_gpu": 400},
        "starts_at": TS,
        "ends_at": "2026-12-29T12:00:00.000Z",
        "price_usd_per_gpu_hour": "2.50",
    }


def spend() -> dict[str, Any]:
    return {"usd_spent": "0.00", "usd_committed": "0.00", "budget_usd": "30000.00"}


def run(run_id: str = "run_1", last_event_seq: int = 0, state: str = "queued") -> dict[str, Any]:
    return {
        "run_id": run_id,
        "booking_id": "bk_1",
        "spec": {
            "booking_id": "bk_1",
            "model_size": "8B",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general",
            "budget_usd": "30000.00",
        },
        "state": state,
        "spend": spend(),
        "last_event_seq": last_event_seq,
        "created_at": TS,
        "updated_at": TS,
    }


def run_summary(run_id: str = "run_1") -> dict[str, Any]:
    return {
        "run_id": run_id,
        "booking_id": "bk_1",
        "state": "running",
        "spend": spend(),
        "created_at": TS,
        "updated_at": TS,
    }


def proposal(proposal_id: str = "prop_1", status: str = "pending") -> dict[str, Any]:
    return {
        "proposal_id": proposal_id,
        "run_id": "run_1",
        "kind": "rollback_and_skip",
        "status": status,
        "created_at": TS,
        "expires_at": "2026-11-29T13:00:00.000Z",
        "trigger": {"reason": "loss spike"},
        "action": {"rollback_to_step": 100},
        "impact": {"added_usd": "12.00"},
    }


def estimate() -> dict[str, Any]:
    return {
        "total_gpu_hours": 10.0,
        "wall_clock_h_p50": 1.0,
        "wall_clock_h_p90": 2.0,
        "usd_p50": "25.00",
        "usd_p90": "50.00",
        "fits_budget": True,
        "fits_booking_window": True,
        "expected_interruptions": 0.1,
    }


def checkpoint() -> dict[str, Any]:
    return {
        "checkpoint_id": "ckpt_1",
        "stage": "pretrain",
        "step": 100,
        "created_at": TS,
        "size_gb": 96.0,
        "blocking_s": 5.0,
        "persist_s": 30.0,
    }


SPEC = {
    "booking_id": "bk_1",
    "model_size": "8B",
    "data_ref": "catalog://fineweb-edu@1.3",
    "target_capability": "general",
    "budget_usd": "30000",
}
