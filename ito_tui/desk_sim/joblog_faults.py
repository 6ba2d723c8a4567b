"""The job log's lines for failures and the fleet: a node failing (Xid, torchft losing its
replica), the collective timing out (NCCL watchdogs, the failing rank's traceback), a hang,
the spare joining, the replica healing, quorums, stragglers, node health, the run's end.

See `joblog.py` for which event writes what, in which order.
"""

from __future__ import annotations

import re
from datetime import datetime

from . import joblog_text as t
from .core import JsonDict
from .joblog_context import LogContext, Maker, num
from .joblog_text import Line
from .physics import uniform


def fault_no(fault_id: object) -> str:
    """`flt_<run>_3` -> `3`: draws keyed by it are the same in every run of the seed."""
    return str(fault_id).rsplit("_", 1)[-1]


def xid_gpu(node: str, fault_id: object, ctx: LogContext, reason: object = None) -> int:
    """The GPU that fell off the bus: the one the fleet counts the Xid on."""
    said = re.search(r"on GPU (\d+)", str(reason or ""))
    if said is not None:
        return int(said[1]) % ctx.gpus_per_node
    if node in ctx.xid_gpu:
        return ctx.xid_gpu[node] % ctx.gpus_per_node
    return int(uniform(ctx.seed, "xid-gpu", fault_no(fault_id)) * ctx.gpus_per_node)


def node_lost(
    node: str, step: int | None, fault_id: object, ctx: LogContext, reason: object = None
) -> list[Line]:
    """The moment a node fails: the kernel's Xid line, torchft losing the replica."""
    gpu = xid_gpu(node, fault_id, ctx, reason)
    lines = [t.xid_line(ctx.seed, node, gpu, (node, fault_no(fault_id)))]
    return lines + t.replica_lost(ctx.replica_of(node), node, step)


def watchdog(node: str, fault_id: object, ctx: LogContext, when: datetime) -> list[Line]:
    """When the collective times out (the fault's detection): the NCCL watchdog on the failed
    node's ranks and a peer's, then the traceback of the rank whose GPU fell off the bus."""
    ranks = ctx.ranks_of(node)
    gpu = xid_gpu(node, fault_id, ctx)
    coll = 40_000 + int(uniform(ctx.seed, "coll-seq", node, fault_no(fault_id)) * 20_000)
    peer = ctx.peer_of(node)
    timed_out = [*ranks, ctx.ranks_of(peer)[0]] if peer != node else list(ranks)
    lines = [
        t.nccl_timeout(rank, ctx.node_of(rank) if rank not in ranks else node, when, coll,
                       600_012 + 37 * i)
        for i, rank in enumerate(timed_out)
    ]  # fmt: skip
    return lines + t.traceback(ranks[gpu], node, when)


def node_failed(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    host = str(data["hostname"])
    return node_lost(host, None, data.get("fault_id"), ctx, data.get("reason"))


def fault_detected(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    node, kind, fault_id = data.get("node"), data.get("kind"), data.get("fault_id")
    lines: list[Line] = []
    if kind == "node_failure" and node:
        node = t.short(str(node))
        if not ctx.fleet_events:
            lines += node_lost(node, data.get("step"), fault_id, ctx)
        lines += watchdog(node, fault_id, ctx, when)
    elif kind == "hang":
        # Every rank sits in the same collective: every watchdog fires.
        coll = 40_000 + int(uniform(ctx.seed, "coll-seq", fault_no(fault_id)) * 20_000)
        lines += [
            t.nccl_timeout(rank, ctx.node_of(rank), when, coll, 600_012 + 3 * rank)
            for rank in range(ctx.world_size)
        ]
    where = f" on {node}" if node else ""
    lines.append(
        Line(
            f"controller: fault {fault_id}{where} ({kind}) detected after "
            f"{num(data.get('detected_after_s'), 0.0):.0f}s; "
            + ("replacing the node" if kind == "node_failure" else "restarting the job"),
            "error",
            "system",
            node=str(node) if node else None,
        )
    )
    return lines


def node_replaced(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    failed = str(data["hostname"])
    spare = str(data.get("replaced_by") or failed)
    return t.spare_joins(spare, failed, str(data.get("replica_id") or ctx.replica_of(failed)))


def fault_recovered(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
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


def quorum(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
    return [t.quorum(int(data["quorum_id"]), int(data["participants"]), data.get("min_replicas"))]


def straggler(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
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
            + f" step time {num(data.get('step_time_s'), 0.0):.2f}s vs fleet p50 "
            f"{num(data.get('fleet_p50_s'), 0.0):.2f}s",
            "warning",
            "system",
            rank=rank,
            node=host,
        ),
    ]


def node_note(level: str, word: str) -> Maker:
    def make(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
        host = str(data["hostname"])
        reason = f": {data['reason']}" if data.get("reason") else ""
        return [Line(f"{t.short(host)} node health: {word}{reason}", level, "system", node=host)]

    return make


def run_ended(word: str, level: str) -> Maker:
    def make(data: JsonDict, ctx: LogContext, when: datetime) -> list[Line]:
        return [Line(f"torchrun: job {word}", level, "system", node=ctx.rank0_node)]

    return make
