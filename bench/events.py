"""Synthetic event envelopes (telemetry, progress, SLO breaches) as wire JSON, via the contract."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from ito_tui.contract import event_to_json, make_event

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def telemetry_data(seq: int, step: int, stage: str = "pretrain") -> dict[str, Any]:
    """A plausible TelemetrySample payload for `step`."""
    loss = 2.1 + 1.8 * math.exp(-step / 4000) + 0.03 * math.sin(step / 17)
    return {
        "seq": seq,
        "ts": (T0 + timedelta(seconds=step)).isoformat().replace("+00:00", "Z"),
        "stage": stage,
        "step": step,
        "tokens_seen": step * 4_194_304,
        "loss": round(loss, 5),
        "loss_z": round(math.sin(step / 13), 3),
        "grad_norm": round(0.9 + 0.1 * math.cos(step / 11), 4),
        "lr": 3e-4,
        "tokens_per_s_per_gpu": 7800.0 + (step % 50),
        "mfu_frac": 0.36,
        "mem_max_reserved_gib": 61.5,
        "goodput": {
            "scheduling_frac": 0.99,
            "runtime_frac": 0.97,
            "program_frac": 0.9,
            "ml_productivity_frac": 0.86,
        },
        "interruptions_total": 1,
        "interruptions_per_1k_gpu_hours": 0.02,
        "checkpoint": {"last_step": step - step % 500, "size_gb": 96.0, "blocking_s": 5.1},
        "spend_usd": f"{1234.5 + step * 0.05:.2f}",
    }


def telemetry_json(seq: int, step: int, run_id: str, stage: str = "pretrain") -> str:
    """One `telemetry` event as the wire JSON."""
    ts = (T0 + timedelta(seconds=step)).isoformat().replace("+00:00", "Z")
    ev = make_event(
        "telemetry",
        seq=seq,
        run_id=run_id,
        ts=ts,
        sim_ts=ts,
        stage=stage,
        data=telemetry_data(seq, step, stage),
    )
    return event_to_json(ev)


def progress_json(seq: int, step: int, run_id: str, total: int, stage: str = "pretrain") -> str:
    """One `stage.progress` event as the wire JSON."""
    ts = (T0 + timedelta(seconds=step)).isoformat().replace("+00:00", "Z")
    data = {
        "stage": stage,
        "progress": {
            "step": step,
            "total_steps": total,
            "tokens": step * 4_194_304,
            "total_tokens": total * 4_194_304,
            "frac": min(step / total, 1.0),
            "eta_s": float(max(total - step, 0)),
        },
    }
    ev = make_event(
        "stage.progress", seq=seq, run_id=run_id, ts=ts, sim_ts=ts, stage=stage, data=data
    )
    return event_to_json(ev)


def slo_json(seq: int, run_id: str, stage: str = "pretrain") -> str:
    """One `slo.breached` event (a resume that took 21 min against 15) as the wire JSON."""
    ts = T0.isoformat().replace("+00:00", "Z")
    data = {"slo": "resume", "fault_id": None, "value_s": 1260.0, "limit_s": 900.0}
    ev = make_event(
        "slo.breached", seq=seq, run_id=run_id, ts=ts, sim_ts=ts, stage=stage, data=data
    )
    return event_to_json(ev)


def stream(run_id: str, n: int, *, first_seq: int = 1, first_step: int = 1000) -> list[bytes]:
    """`n` events: telemetry, with a stage.progress every 10th (the live-run mix)."""
    out = []
    for i in range(n):
        seq, step = first_seq + i, first_step + i
        if i % 10 == 9:
            out.append(progress_json(seq, step, run_id, total=first_step + 100 * n).encode())
        else:
            out.append(telemetry_json(seq, step, run_id).encode())
    return out
