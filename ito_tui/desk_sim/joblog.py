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

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from . import joblog_text as t
from .core import JsonDict, parse_iso
from .joblog_context import LogContext
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
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text, False
    return raw[:max_bytes].decode("utf-8", "ignore"), True


# ---------------------------------------------------------------- the handlers

Maker = Callable[[JsonDict, LogContext, datetime], list[Line]]


def _num(value: Any, default: float = float("nan")) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _telemetry(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    step = int(data.get("step") or 0)
    tps = _num(data.get("tokens_per_s_per_gpu"), 0.0)
    mem = _num(data.get("mem_max_reserved_gib"), 0.0)
    mfu = data.get("mfu_frac")
    text = t.trainer_metrics(
        step,
        _num(data.get("loss")),
        _num(data.get("grad_norm")),
        mem,
        100 * mem / max(ctx.hbm_gib, 1e-9),
        tps,
        6 * ctx.params * tps / 1e12,
        None if mfu is None or ctx.fp8 else 100 * _num(mfu),
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
            f"Finished saving the checkpoint in {_num(ckpt.get('blocking_s'), 0.0):.2f} seconds.",
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


def _fault_no(fault_id: object) -> str:
    """`flt_<run>_3` -> `3`: draws keyed by it are the same in every run of the seed."""
    return str(fault_id).rsplit("_", 1)[-1]


def _xid_gpu(node: str, fault_id: object, ctx: LogContext, reason: object = None) -> int:
    """The GPU that fell off the bus: the one the fleet counts the Xid on."""
    said = re.search(r"on GPU (\d+)", str(reason or ""))
    if said is not None:
        return int(said[1]) % ctx.gpus_per_node
    if node in ctx.xid_gpu:
        return ctx.xid_gpu[node] % ctx.gpus_per_node
    return int(uniform(ctx.seed, "xid-gpu", _fault_no(fault_id)) * ctx.gpus_per_node)


def _node_lost(
    node: str, step: int | None, fault_id: object, ctx: LogContext, reason: object = None
) -> list[Line]:
    """The moment a node fails: the kernel's Xid line, torchft losing the replica."""
    gpu = _xid_gpu(node, fault_id, ctx, reason)
    lines = [t.xid_line(ctx.seed, node, gpu, (node, _fault_no(fault_id)))]
    return lines + t.replica_lost(ctx.replica_of(node), node, step)


def _watchdog(node: str, fault_id: object, ctx: LogContext, when: datetime) -> list[Line]:
    """When the collective times out (the fault's detection): the NCCL watchdog on the failed
    node's ranks and a peer's, then the traceback of the rank whose GPU fell off the bus."""
    ranks = ctx.ranks_of(node)
    gpu = _xid_gpu(node, fault_id, ctx)
    coll = 40_000 + int(uniform(ctx.seed, "coll-seq", node, _fault_no(fault_id)) * 20_000)
    peer = ctx.peer_of(node)
    timed_out = [*ranks, ctx.ranks_of(peer)[0]] if peer != node else list(ranks)
    lines = [
        t.nccl_timeout(rank, ctx.node_of(rank) if rank not in ranks else node, when, coll,
                       600_012 + 37 * i)
        for i, rank in enumerate(timed_out)
    ]  # fmt: skip
    return lines + t.traceback(ranks[gpu], node, when)


def _node_failed(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    host = str(data["hostname"])
    return _node_lost(host, None, data.get("fault_id"), ctx, data.get("reason"))


def _fault_detected(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    node, kind, fault_id = data.get("node"), data.get("kind"), data.get("fault_id")
    lines: list[Line] = []
    if kind == "node_failure" and node:
        node = t.short(str(node))
        if not ctx.fleet_events:
            lines += _node_lost(node, data.get("step"), fault_id, ctx)
        lines += _watchdog(node, fault_id, ctx, when)
    elif kind == "hang":
        # Every rank sits in the same collective: every watchdog fires.
        coll = 40_000 + int(uniform(ctx.seed, "coll-seq", _fault_no(fault_id)) * 20_000)
        lines += [
            t.nccl_timeout(rank, ctx.node_of(rank), when, coll, 600_012 + 3 * rank)
            for rank in range(ctx.world_size)
        ]
    where = f" on {node}" if node else ""
    lines.append(
        Line(
            f"controller: fault {fault_id}{where} ({kind}) detected after "
            f"{_num(data.get('detected_after_s'), 0.0):.0f}s; "
            + ("replacing the node" if kind == "node_failure" else "restarting the job"),
            "error",
            "system",
            node=str(node) if node else None,
        )
    )
    return lines


def _node_replaced(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    failed = str(data["hostname"])
    spare = str(data.get("replaced_by") or failed)
    return t.spare_joins(spare, failed, str(data.get("replica_id") or ctx.replica_of(failed)))


def _fault_recovered(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    failed = t.short(str(data.get("node") or ctx.rank0_node))
    replica = ctx.replica_of(failed)
    step = int(data.get("resumed_from_step") or 0)
    lines: list[Line] = []
    if data.get("kind") == "node_failure":
        healer = ctx.slots[ctx.slot(failed)]
        if not ctx.fleet_events or healer == failed:
            healer = f"{failed}-spare"
            lines += t.spare_joins(healer, failed, replica)
        lines += t.recovering(replica, healer, ctx.peer_of(failed), step)
    lines.append(Line(f"Loading the checkpoint at step {step}.", rank=0, node=ctx.rank0_node,
                      source="checkpoint"))  # fmt: skip
    lines.append(Line(f"Training resumes at step {step + 1}", rank=0, node=ctx.rank0_node))
    return lines


def _quorum(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    return [t.quorum(int(data["quorum_id"]), int(data["participants"]), data.get("min_replicas"))]


def _straggler(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    host = str(data["hostname"])
    rank = data.get("rank")
    return [
        Line(
            f"{t.short(host)} nvidia-smi: clocks_event_reasons.hw_thermal_slowdown: Active",
            "warning",
            "system",
            node=host,
        ),
        Line(
            f"straggler: {t.short(host)}"
            + (f" rank {rank}" if rank is not None else "")
            + f" step time {_num(data.get('step_time_s'), 0.0):.2f}s vs fleet p50 "
            f"{_num(data.get('fleet_p50_s'), 0.0):.2f}s",
            "warning",
            "system",
            rank=rank,
            node=host,
        ),
    ]


def _node_note(level: str, word: str) -> Maker:
    def make(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
        host = str(data["hostname"])
        reason = f": {data['reason']}" if data.get("reason") else ""
        return [Line(f"{t.short(host)} node health: {word}{reason}", level, "system", node=host)]

    return make


def _run_ended(word: str, level: str) -> Maker:
    def make(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
        return [Line(f"torchrun: job {word}", level, "system", node=ctx.rank0_node)]

    return make


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
            f"eval: |{r.get('benchmark')}|{r.get('metric')}|{_num(r.get('value')):.4f}|± "
            f"{_num(r.get('stderr'), 0.0):.4f}| needs {r.get('comparator', '>=')} "
            f"{_num(r.get('threshold')):.4f} ({r.get('rule')}): {'pass' if ok else 'FAIL'}",
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


def _size(params: float) -> str:
    return f"{params / 1e9:g}B" if params >= 1e9 else f"{params / 1e6:g}M"


_HANDLERS: dict[str, Maker] = {
    "telemetry": _telemetry,
    "stage.started": _stage_started,
    "stage.completed": _stage_completed,
    "checkpoint.saved": _checkpoint_saved,
    "checkpoint.failed": _checkpoint_failed,
    "gate.started": _gate_started,
    "gate.result": _gate_result,
    "gate.passed": _gate_decided("passed", "info"),
    "gate.failed": _gate_decided("FAILED: the run stops here", "error"),
    "node.failed": _node_failed,
    "fault.detected": _fault_detected,
    "node.replaced": _node_replaced,
    "fault.recovered": _fault_recovered,
    "quorum.changed": _quorum,
    "straggler.detected": _straggler,
    "straggler.cleared": _node_note("info", "no longer flagged as a straggler"),
    "node.degraded": _node_note("warning", "degraded"),
    "node.recovered": _node_note("info", "recovered"),
    "run.completed": _run_ended("completed: all workers exited 0", "info"),
    "run.failed": _run_ended("failed", "error"),
    "run.cancelled": _run_ended("cancelled: received SIGTERM, shutting down workers", "warning"),
}
