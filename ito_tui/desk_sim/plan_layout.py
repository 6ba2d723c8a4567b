"""Choosing a parallel layout the way torchtitan's published configs do.

Rules (in order of preference, each escalated only when memory demands it):
FSDP alone up to ~10B parameters; FSDP × TP (8, inside one NVLink node) up to ~100B;
pipeline parallelism beyond that; context parallelism for sequences of 32K tokens or more;
torchft HSDP across nodes (each node, or group of nodes, one replica group); float8 rowwise
on Hopper, MX fp8 on Blackwell for models of 1B parameters or more; torch.compile on;
activation checkpointing none → selective → full by memory pressure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ito_tui.contract import ActivationCheckpoint, Precision

from .catalog import GpuSku, ModelArch
from .plan_perf import GIB, STATE_BYTES_PER_PARAM, Layout, MemoryEstimate, memory_estimate

__all__ = [
    "LONG_CONTEXT_SEQ_LEN",
    "MEMORY_HEADROOM_FRAC",
    "TARGET_TOKENS_PER_GPU_STEP",
    "LayoutChoice",
    "choose_layout",
    "choose_precision",
    "desired_pp",
    "desired_tp",
    "long_context_seq_len",
    "usable_gib",
]

FSDP_ONLY_MAX_PARAMS = 10e9
TP_MAX_PARAMS = 100e9
PARAMS_PER_PP_STAGE = 15e9
"""Beyond ~100B, split layers so one TP group's pipeline stage holds at most ~15B params."""
LONG_CONTEXT_SEQ_LEN = 32_768
LONG_CONTEXT_SEQ_MAX = 131_072
CP_SEQ_PER_RANK = 16_384
"""Context parallelism splits long sequences so each rank sees at most 16K tokens."""
TARGET_TOKENS_PER_GPU_STEP = 16_384
"""torchtitan's 8B recipe: local batch 2 × 8192 tokens per GPU."""
MEMORY_HEADROOM_FRAC = 0.985
"""Plans must leave ~1.5 % of HBM free for allocator spikes."""
NO_AC_HEADROOM_FRAC = 0.9
"""Without activation checkpointing a plan must stay under 90 % of the usable memory."""
FP8_MIN_PARAMS = 1e9


@dataclass(frozen=True)
class LayoutChoice:
    """The chosen layout with its memory estimate; `fits` is False when nothing fits."""

    layout: Layout
    memory: MemoryEstimate
    fits: bool
    candidates_tried: int


def usable_gib(sku: GpuSku) -> float:
    """Memory per GPU a plan may use."""
    return sku.hbm_gib * MEMORY_HEADROOM_FRAC


def desired_tp(arch: ModelArch, gpus_per_node: int) -> int:
    """Tensor-parallel degree torchtitan would start from: 1 up to ~10B, else the node width."""
    return 1 if arch.params <= FSDP_ONLY_MAX_PARAMS else _pow2_floor(min(8, gpus_per_node))


def desired_pp(arch: ModelArch, tp: int) -> int:
    """Pipeline degree: 1 up to ~100B, else enough stages to keep each under ~15B params."""
    if arch.params <= TP_MAX_PARAMS:
        return 1
    return _pow2_ceil(arch.params / tp / PARAMS_PER_PP_STAGE)


def desired_cp(seq_len: int) -> int:
    """Context-parallel degree for long sequences (1 below 32K tokens)."""
    if seq_len < LONG_CONTEXT_SEQ_LEN:
        return 1
    return _pow2_ceil(seq_len / CP_SEQ_PER_RANK)


def long_context_seq_len(seq_len: int) -> int:
    """Sequence length of the long-context stage: 4× pretraining's, 32K to 128K tokens."""
    return min(max(LONG_CONTEXT_SEQ_LEN, 4 * seq_len), LONG_CONTEXT_SEQ_MAX)


def choose_precision(sku: GpuSku, arch: ModelArch) -> Precision:
    """MX fp8 on Blackwell, float8 rowwise on Hopper, bf16 for models too small to gain."""
    if arch.params < FP8_MIN_PARAMS:
        return Precision.bf16
    if sku.supports_mxfp8:
        return Precision.mxfp8
    return Precision.float8_rowwise


def _pow2_floor(x: float) -> int:
    return 1 << max(0, math.floor(math.log2(max(x, 1.0))))


def _pow2_ceil(x: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(x, 1.0))))


def _pow2_up_to(start: int, limit: int) -> list[int]:
    out = []
    value = start
    while value <= limit:
        out.append(value)
        value *= 2
    return out


def _local_batches(seq_len: int, cp: int, pp: int) -> list[int]:
    per_rank = max(1, seq_len // cp)
    top = max(1, TARGET_TOKENS_PER_GPU_STEP // per_rank)
    if pp > 1:
        top = max(top, 2 * pp)  # enough microbatches to keep the pipeline bubble small
    out = []
    value = _pow2_floor(top)
    while value >= 1:
        out.append(value)
        value //= 2
    return out


def _tp_options(tp0: int, gpus_per_node: int) -> list[int]:
    fitting = [t for t in _pow2_up_to(1, gpus_per_node) if gpus_per_node % t == 0]
    preferred = [t for t in fitting if t >= tp0]
    return preferred or fitting[-1:]


def _cp_options(seq_len: int, room: int) -> list[int]:
    """CP degrees to try: from the long-context default up to what the mesh has room for."""
    if seq_len < LONG_CONTEXT_SEQ_LEN:
        return [1]
    cap = _pow2_floor(max(room, 1))
    return _pow2_up_to(min(desired_cp(seq_len), cap), cap)


_AC_TIERS: tuple[tuple[ActivationCheckpoint, ...], ...] = (
    (ActivationCheckpoint.none, ActivationCheckpoint.selective),
    (ActivationCheckpoint.full,),
)


def _meshes(
    arch: ModelArch, node_count: int, gpus_per_node: int, seq_len: int
) -> Iterator[tuple[int, int, int]]:
    """(pp, tp, cp) in preference order: torchtitan's defaults first, escalating PP last."""
    world = node_count * gpus_per_node
    tp0 = desired_tp(arch, gpus_per_node)
    pp0 = min(desired_pp(arch, tp0), _pow2_floor(max(world // tp0, 1)))
    for pp in _pow2_up_to(pp0, world):
        for tp in _tp_options(tp0, gpus_per_node):
            if world % (tp * pp):
                continue
            for cp in _cp_options(seq_len, world // (tp * pp)):
                yield pp, tp, cp


def _replica_options(node_count: int) -> list[int]:
    """Replica-group counts, most first: each group is a whole number of nodes."""
    return [r for r in range(node_count, 0, -1) if node_count % r == 0]


def _layout(
    r: int, group: int, mesh: tuple[int, int, int], lbs: int, ac: ActivationCheckpoint,
    seq_len: int, precision: Precision,
) -> Layout:  # fmt: skip
    pp, tp, cp = mesh
    return Layout(
        dp_replicate=r,
        dp_shard=group // (tp * pp * cp),
        tp=tp,
        pp=pp,
        cp=cp,
        local_batch_seqs=lbs,
        seq_len=seq_len,
        activation_checkpoint=ac,
        precision=precision,
    )


def _fits(memory: MemoryEstimate, ac: ActivationCheckpoint, sku: GpuSku) -> bool:
    # Running without checkpointing leaves no recompute slack: demand more headroom for it.
    limit = usable_gib(sku) * (NO_AC_HEADROOM_FRAC if ac == ActivationCheckpoint.none else 1.0)
    return memory.total_gib <= limit


def choose_layout(
    arch: ModelArch,
    sku: GpuSku,
    *,
    node_count: int,
    gpus_per_node: int,
    seq_len: int,
    precision: Precision,
    rank: Callable[[Layout], float] | None = None,
) -> LayoutChoice:
    """The most preferred layout that fits in memory, or the leanest one with `fits=False`.

    Meshes (pp, tp, cp) and activation-checkpointing tiers are tried in preference order;
    within the first that fits, every replica-group count with its best batch is a
    candidate, and `rank` (e.g. tokens/s) picks among them — ties keep the most replicas.
    """
    world = node_count * gpus_per_node
    tried = 0
    state_floor = STATE_BYTES_PER_PARAM * arch.params / max(world, 1) / GIB
    meshes = list(_meshes(arch, node_count, gpus_per_node, seq_len))
    if state_floor <= usable_gib(sku):
        for mesh in meshes:
            pp, tp, cp = mesh
            for tier in _AC_TIERS:
                found: list[tuple[Layout, MemoryEstimate]] = []
                for r in _replica_options(node_count):
                    group = world // r
                    if group % (tp * pp * cp):
                        continue
                    hit = None
                    for lbs in _local_batches(seq_len, cp, pp):
                        for ac in tier:
                            layout = _layout(r, group, mesh, lbs, ac, seq_len, precision)
                            memory = memory_estimate(arch, layout)
                            tried += 1
                            if _fits(memory, ac, sku):
                                hit = (layout, memory)
                                break
                        if hit is not None:
                            break
                    if hit is not None:
                        found.append(hit)
                if found:
                    best = max(found, key=lambda c: rank(c[0]) if rank else 0.0)
                    return LayoutChoice(best[0], best[1], True, tried)
    # Nothing fits: report the leanest layout (fully sharded, full AC, one sequence per rank).
    leanest: tuple[Layout, MemoryEstimate] | None = None
    for mesh in meshes:
        pp, tp, cp = mesh
        if world % (tp * pp * cp):
            continue
        layout = _layout(1, world, mesh, 1, ActivationCheckpoint.full, seq_len, precision)
        memory = memory_estimate(arch, layout)
        tried += 1
        if leanest is None or memory.total_gib < leanest[1].total_gib:
            leanest = (layout, memory)
    if leanest is None:
        fallback = Layout(1, world, 1, 1, 1, 1, seq_len, ActivationCheckpoint.full, precision)
        leanest = (fallback, memory_estimate(arch, fallback))
    return LayoutChoice(leanest[0], leanest[1], False, tried)
