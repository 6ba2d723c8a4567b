"""The simulated job log: lines DERIVED from what the engine drains (API.md v1.1 "Logs").

`lines_for(event_type, data, ctx, ts=, sim_ts=)` maps one drained event (its type and
its `data` as JSON) to the log lines the real processes would have written at that
moment, as LogLine dicts without `seq` (the writer, `joblog_store.JobLog`, numbers and
stores them). It is pure: the same run (seed, spec, booking) gives the same lines
whatever the wall-clock ticks, so the log is as deterministic as the event stream.

What goes where (ranks as torchrun numbers them: node i holds ranks i*g .. i*g+g-1):
- `telemetry` -> rank 0's torchtitan metrics line (one per sample: the simulator samples
  every `log_freq` steps' worth), now and then a dataloader warning on some rank;
- `stage.started` / `stage.completed` of a training stage -> rank 0's start/finish lines;
- `checkpoint.saved|failed` -> rank 0's checkpoint lines;
- `data.dedup|decontam_completed` -> the data pipeline's lines; `loss.spike_detected` ->
  the controller's warning; an approved rollback (`proposal.executed`) -> the trainer
  loading the checkpoint, skipping batches, resuming;
- `gate.*` -> the evaluation's lines (lm-evaluation-harness rows, a failing one an error);
- the node-failure chain, in this order: when the node fails (`node.failed`) the kernel's
  Xid line (system, that node) and torchft losing its replica; when the collective times
  out (`fault.detected`, the time the fault is shown at) the NCCL watchdog timeouts (the
  failed node's ranks and a peer's), the failing rank's traceback (error, its last two
  lines critical) and the controller's line; then the spare node joining
  (`node.replaced`), the replica healing from a peer and the trainer resuming
  (`fault.recovered`). Without the fleet's events on the stream (an engine state
  without a fleet, `LogContext.fleet_events`) the same lines hang on `fault.detected`
  / `fault.recovered` alone, in the same order; a `hang` fault times out every rank;
- `quorum.changed` -> the lighthouse's `Quorum!` line; `straggler.*`, `node.degraded|
  recovered` -> system warnings/infos on that node; the run's end -> torchrun's line.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from . import joblog_faults as f
from . import joblog_text as t
from .core import JsonDict, parse_iso
from .joblog_context import LogContext, Maker, num
from .joblog_text import Line
from .physics import uniform

DATALOADER_WARN_P = 0.06
"""Chance that a telemetry sample comes with a dataloader warning on some rank."""
TRAINING = ("pretrain", "mid_train", "long_context", "sft", "dpo", "rlvr")


def lines_for(
    event_type: str, data: JsonDict, ctx: LogContext, *, ts: str, sim_ts: str | None
) -> list[JsonDict]:
    """The log lines one drained event stands for (LogLine dicts without seq), in order."""
    make = _HANDLERS.get(event_type)
    if make is None:
        return []
    when = parse_iso(sim_ts or ts)
    return [_stamp(line, ts, sim_ts) for line in make(data, ctx, when)]


def _stamp(line: Line, ts: str, sim_ts: str | None) -> JsonDict:
    return {
        "ts": ts,
        "sim_ts": sim_ts,
        "rank": line.rank,
        "node": line.node,
        "replica_id": line.replica_id,
        "level": line.level,
        "source": line.source,
        "text": line.text,
    }


def cut(text: str, max_bytes: int) -> tuple[str, bool]:
    """`text` cut to at most `max_bytes` UTF-8 bytes, never inside a character."""
    if 4 * len(text) <= max_bytes:
        return text, False  # at most 4 bytes a character: no need to encode it
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text, False
    return raw[:max_bytes].decode("utf-8", "ignore"), True


# ---------------------------------------------------------------- the handlers


def _telemetry(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    step = int(data.get("step") or 0)
    tps = num(data.get("tokens_per_s_per_gpu"), 0.0)
    mem = num(data.get("mem_max_reserved_gib"), 0.0)
    mfu = data.get("mfu_frac")
    text = t.trainer_metrics(
        step,
        num(data.get("loss")),
        num(data.get("grad_norm")),
        mem,
        100 * mem / max(ctx.hbm_gib, 1e-9),
        tps,
        (ctx.flops_per_token or 6 * ctx.params) * tps / 1e12,
        None if mfu is None or ctx.fp8 else 100 * num(mfu),
    )
    lines = [Line(text, rank=0, node=ctx.rank0_node)]
    key = (data.get("stage"), step)
    if uniform(ctx.seed, "dl-warn", key) < DATALOADER_WARN_P:
        rank = int(uniform(ctx.seed, "dl-rank", key) * ctx.world_size)
        lines.append(t.dataloader_warning(ctx.seed, rank, ctx.node_of(rank), key))
    return lines


def _stage_started(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    stage = str(data.get("stage"))
    if stage not in TRAINING:
        return []
    node = ctx.rank0_node
    return [
        Line(f"Starting job: {stage}", rank=0, node=node),
        Line(
            f"Building llama3 {_size(ctx.params)} with world size {ctx.world_size} "
            f"({len(ctx.slots)} nodes x {ctx.gpus_per_node} GPUs), "
            f"{'float8' if ctx.fp8 else 'bf16'} training",
            rank=0,
            node=node,
        ),
        Line(
            f"Training starts at step 1, total steps {int(data.get('total_steps') or 0):,}",
            rank=0,
            node=node,
        ),
    ]


def _stage_completed(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    if str(data.get("stage")) not in TRAINING:
        return []
    return [Line("Training completed", rank=0, node=ctx.rank0_node)]


def _checkpoint_saved(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    ckpt: JsonDict = data.get("checkpoint") or {}
    node = ctx.rank0_node
    return [
        Line(
            f"Saving a checkpoint at step {ckpt.get('step')}.",
            rank=0,
            node=node,
            source="checkpoint",
        ),
        Line(
            f"Finished saving the checkpoint in {num(ckpt.get('blocking_s'), 0.0):.2f} seconds.",
            rank=0,
            node=node,
            source="checkpoint",
        ),
    ]


def _checkpoint_failed(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    reason = data.get("reason") or data.get("detail") or "write failed"
    return [
        Line(f"Failed to save the checkpoint: {reason}", "error", "checkpoint", 0, ctx.rank0_node)
    ]


def _gate_started(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    gate: JsonDict = data.get("gate") or {}
    return [
        Line(
            f"eval: gate {gate.get('gate_id')} ({gate.get('battery_id')}) on the "
            f"{gate.get('stage')} checkpoint: lm-evaluation-harness started",
            source="system",
            node=ctx.rank0_node,
        )
    ]


def _gate_result(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    """One row of lm-evaluation-harness's results table, and the gate's verdict on it."""
    r: JsonDict = data.get("result") or {}
    ok = bool(r.get("passed"))
    return [
        Line(
            f"eval: |{r.get('benchmark')}|{r.get('metric')}|{num(r.get('value')):.4f}|± "
            f"{num(r.get('stderr'), 0.0):.4f}| needs {r.get('comparator', '>=')} "
            f"{num(r.get('threshold')):.4f} ({r.get('rule')}): {'pass' if ok else 'FAIL'}",
            "info" if ok else "error",
            "system",
            node=ctx.rank0_node,
        )
    ]


def _gate_decided(word: str, level: str) -> Maker:
    def make(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
        gate: JsonDict = data.get("gate") or {}
        return [
            Line(f"eval: gate {gate.get('gate_id')} {word}", level, "system", node=ctx.rank0_node)
        ]

    return make


def _dedup(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    before, after = int(data.get("documents_before") or 0), int(data.get("documents_after") or 0)
    return [
        Line(
            f"dedup: {before:,} -> {after:,} documents "
            f"({100 * num(data.get('removed_frac'), 0.0):.2f}% removed; "
            f"{data.get('method') or 'minhash'})",
            source="dataloader",
            node=ctx.rank0_node,
        )
    ]


def _decontam(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    per: dict[str, Any] = data.get("per_benchmark") or {}
    hits = ", ".join(f"{name}: {int(n):,}" for name, n in sorted(per.items())) or "none"
    return [
        Line(
            f"decontamination: removed {int(data.get('removed_documents') or 0):,} documents "
            f"overlapping evaluation sets ({hits})",
            source="dataloader",
            node=ctx.rank0_node,
        )
    ]


def _spike(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    escalated = data.get("action") == "escalated"
    return [
        Line(
            f"controller: loss spike at step {data.get('step')}: loss {num(data.get('loss')):.4f} "
            f"z={num(data.get('loss_z')):.1f} over {data.get('window')} steps; "
            + ("training paused, a rollback waits for a person" if escalated else "batch skipped"),
            "warning",
            "system",
            node=ctx.rank0_node,
        )
    ]


def _executed(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    """A rollback a person approved, as the trainer carries it out."""
    proposal: JsonDict = data.get("proposal") or {}
    action: JsonDict = proposal.get("action") or {}
    if proposal.get("kind") != "rollback_and_skip" or action.get("rollback_to_step") is None:
        return []
    step = int(action["rollback_to_step"])
    skip = int(action.get("skip_batches") or 0)
    node = ctx.rank0_node
    return [
        Line(f"Loading the checkpoint at step {step}.", rank=0, node=node, source="checkpoint"),
        Line(f"dataloader: skipping the next {skip:,} batches", rank=0, node=node,
             source="dataloader"),
        Line(f"Training resumes at step {step + 1}", rank=0, node=node),
    ]  # fmt: skip


def _size(params: float) -> str:
    return f"{params / 1e9:g}B" if params >= 1e9 else f"{params / 1e6:g}M"


_HANDLERS: dict[str, Maker] = {
    "telemetry": _telemetry,
    "stage.started": _stage_started,
    "stage.completed": _stage_completed,
    "checkpoint.saved": _checkpoint_saved,
    "checkpoint.failed": _checkpoint_failed,
    "data.dedup_completed": _dedup,
    "data.decontam_completed": _decontam,
    "loss.spike_detected": _spike,
    "proposal.executed": _executed,
    "gate.started": _gate_started,
    "gate.result": _gate_result,
    "gate.passed": _gate_decided("passed", "info"),
    "gate.failed": _gate_decided("FAILED: the run stops here", "error"),
    "node.failed": f.node_failed,
    "fault.detected": f.fault_detected,
    "node.replaced": f.node_replaced,
    "fault.recovered": f.fault_recovered,
    "quorum.changed": f.quorum,
    "straggler.detected": f.straggler,
    "straggler.cleared": f.node_note("info", "no longer flagged as a straggler"),
    "node.degraded": f.node_note("warning", "degraded"),
    "node.recovered": f.node_note("info", "recovered"),
    "run.completed": f.run_ended("completed: all workers exited 0", "info"),
    "run.failed": f.run_ended("failed", "error"),
    "run.cancelled": f.run_ended("cancelled: received SIGTERM, shutting down workers", "warning"),
}
