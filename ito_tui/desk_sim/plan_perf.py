"""Performance model of one training layout: memory per GPU, tokens/s per GPU, comm exposure.

Calibrated on torchtitan's published Llama 3.1 8B numbers on 8×H100 (docs/performance.md:
local batch 2 × 8192, selective activation checkpointing): 82.4 GiB eager, 77.0 GiB with
torch.compile; 6,667 tokens/s/GPU in bf16 with compile (MFU 39 % by torchtitan's FLOP count,
6·non-embedding params + 12·layers·hidden·seq per token), 8,532 with float8; and 3,890
tokens/s/GPU at 32K tokens with full AC. Other sizes scale by FLOPs per token and SKU peak.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ito_tui.contract import ActivationCheckpoint, Precision

from .catalog import GpuSku, ModelArch

__all__ = [
    "GIB",
    "Layout",
    "MemoryEstimate",
    "SpeedEstimate",
    "flops_per_token",
    "memory_estimate",
    "speed_estimate",
]

GIB = float(2**30)

STATE_BYTES_PER_PARAM = 16.0
"""fp32 master weights (4) + fp32 gradients (4) + Adam moments (8), sharded over the group."""

# Bytes kept per token, per layer, per hidden unit, eager. Selective (op-level: every other
# matmul saved) is calibrated to torchtitan's 8B at 82.4 GiB eager; full keeps layer inputs.
_ACT_BYTES: dict[ActivationCheckpoint, float] = {
    ActivationCheckpoint.none: 35.0,
    ActivationCheckpoint.selective: 19.5,
    ActivationCheckpoint.full: 2.0,
}
_COMPILE_ACT_FACTOR = 0.862
"""torch.compile fuses elementwise ops: 82.4 → 77.0 GiB for the 8B reference."""
_COMPILE_SPEEDUP = 1.157
"""torchtitan 8B H100: 5,762 → 6,667 tokens/s/GPU with torch.compile."""
_AC_SPEED: dict[ActivationCheckpoint, float] = {
    ActivationCheckpoint.none: 1.06,
    ActivationCheckpoint.selective: 1.0,
    ActivationCheckpoint.full: 0.78,
}
_RUNTIME_OVERHEAD_GIB = 2.5
"""CUDA context, NCCL buffers and allocator fragmentation."""
_LOGIT_BYTES = 12.0
"""bf16 logits, their fp32 upcast for the loss, and both gradients, per token per vocab entry."""
_FABRIC_EFFICIENCY = 0.7
_OVERLAP = 0.85
"""Share of a step's compute that FSDP/HSDP collectives can hide behind."""


@dataclass(frozen=True)
class Layout:
    """A candidate parallel layout: mesh degrees, batch and memory knobs."""

    dp_replicate: int
    dp_shard: int
    tp: int
    pp: int
    cp: int
    local_batch_seqs: int
    seq_len: int
    activation_checkpoint: ActivationCheckpoint
    precision: Precision
    compile: bool = True

    @property
    def world_size(self) -> int:
        return self.dp_replicate * self.dp_shard * self.tp * self.pp * self.cp

    @property
    def shard_group(self) -> int:
        """GPUs one copy of the model state is spread over (FSDP folds CP into its shards)."""
        return self.dp_shard * self.cp * self.tp * self.pp

    @property
    def tokens_per_rank_step(self) -> int:
        """Tokens one GPU's slice of the batch covers per optimizer step."""
        return self.local_batch_seqs * self.seq_len // self.cp

    @property
    def global_batch_tokens(self) -> int:
        return self.local_batch_seqs * self.seq_len * self.dp_replicate * self.dp_shard


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak memory per GPU, by component, in GiB."""

    state_gib: float
    fsdp_buffers_gib: float
    activations_gib: float
    logits_gib: float
    overhead_gib: float

    @property
    def total_gib(self) -> float:
        return (
            self.state_gib
            + self.fsdp_buffers_gib
            + self.activations_gib
            + self.logits_gib
            + self.overhead_gib
        )


@dataclass(frozen=True)
class SpeedEstimate:
    """Steady-state speed of a layout, before interruptions and checkpoints."""

    tokens_per_s_per_gpu: float
    mfu_frac: float | None
    sync_efficiency: float
    """Compute / (compute + exposed collectives); 1.0 means comms fully hidden."""
    step_compute_s: float
    exposed_comm_s: float


def flops_per_token(arch: ModelArch, seq_len: int) -> float:
    """Training FLOPs per token as torchtitan counts them for MFU.

    6 × non-embedding params (forward + backward matmuls) + 12 × layers × hidden × seq
    (attention scores and values, forward + backward).
    """
    dense = max(arch.params - arch.vocab * arch.hidden, 0.5 * arch.params)
    return 6.0 * dense + 12.0 * arch.layers * arch.hidden * seq_len


def memory_estimate(arch: ModelArch, layout: Layout) -> MemoryEstimate:
    """Peak memory per GPU of `layout` for `arch` (the first pipeline stage, the fullest)."""
    state = STATE_BYTES_PER_PARAM * arch.params / layout.shard_group
    sharded = layout.dp_shard * layout.cp > 1
    # FSDP keeps ~2 unsharded blocks (current + prefetched) in bf16 plus fp32 grad buckets.
    buffers = 2 * arch.layer_params * 6.0 / (layout.tp * layout.pp) if sharded else 0.0
    layers_here = math.ceil(arch.layers / layout.pp)
    micro_tokens = layout.seq_len / layout.cp
    in_flight = (
        micro_tokens * min(layout.local_batch_seqs, layout.pp)
        if layout.pp > 1
        else micro_tokens * layout.local_batch_seqs
    )
    per_token_layer = _ACT_BYTES[ActivationCheckpoint(layout.activation_checkpoint)] * arch.hidden
    if layout.compile:
        per_token_layer *= _COMPILE_ACT_FACTOR
    acts = in_flight * layers_here * per_token_layer
    if layout.activation_checkpoint == ActivationCheckpoint.full:
        # Recomputing a block re-materialises one layer's full activations at a time.
        acts += in_flight * _ACT_BYTES[ActivationCheckpoint.none] * arch.hidden
    acts /= layout.tp  # sequence parallel shards what tensor parallel does not
    logit_tokens = micro_tokens * (1 if layout.pp > 1 else layout.local_batch_seqs)
    logits = logit_tokens * arch.vocab * _LOGIT_BYTES / layout.tp
    return MemoryEstimate(
        state_gib=state / GIB,
        fsdp_buffers_gib=buffers / GIB,
        activations_gib=acts / GIB,
        logits_gib=logits / GIB,
        overhead_gib=_RUNTIME_OVERHEAD_GIB,
    )


def precision_speedup(sku: GpuSku, precision: Precision, params: float) -> float:
    """Throughput gain of `precision` over bf16 on `sku`; smaller matmuls gain less."""
    if precision == Precision.bf16:
        return 1.0
    if precision == Precision.mxfp8:
        full = sku.mxfp8_speedup if sku.mxfp8_speedup is not None else 1.0
    elif precision == Precision.float8_tensorwise:
        full = sku.float8_speedup * 1.03
    else:
        full = sku.float8_speedup
    return 1.0 + (full - 1.0) * min(1.0, math.sqrt(params / 8e9))


def _size_efficiency(params: float) -> float:
    """Small models under-fill the tensor cores; MFU falls off below ~8B parameters."""
    return min(1.03, math.pow(params / 8e9, 0.1))


def speed_estimate(
    arch: ModelArch,
    layout: Layout,
    sku: GpuSku,
    *,
    gpus_per_node: int,
    fabric_gbit_per_s_per_gpu: float,
) -> SpeedEstimate:
    """Tokens/s/GPU of `layout`, with FSDP/HSDP collectives exposed past what compute hides."""
    fpt = flops_per_token(arch, layout.seq_len)
    mfu = sku.mfu_bf16 * _size_efficiency(arch.params)
    mfu *= _AC_SPEED[ActivationCheckpoint(layout.activation_checkpoint)]
    if not layout.compile:
        mfu /= _COMPILE_SPEEDUP
    mfu *= 1.0 - 0.006 * (layout.tp - 1)
    mfu *= 1.0 - 0.03 * math.log2(layout.cp)
    if layout.pp > 1:
        microbatches = max(layout.local_batch_seqs, layout.pp)
        mfu *= 1.0 - (layout.pp - 1) / (2 * microbatches + layout.pp - 1)  # interleaved 1F1B
    speed = precision_speedup(sku, Precision(layout.precision), arch.params)
    achieved = mfu * speed * sku.peak_bf16_tflops * 1e12
    # Per optimizer step one GPU computes its tokens' FLOPs split across its TP group.
    step_s = layout.tokens_per_rank_step * fpt / (layout.tp * layout.pp) / achieved
    exposed = _exposed_comm_s(arch, layout, sku, gpus_per_node, fabric_gbit_per_s_per_gpu, step_s)
    efficiency = step_s / (step_s + exposed)
    tokens_per_s = layout.global_batch_tokens / (step_s + exposed) / layout.world_size
    mfu_frac = (
        None
        if layout.precision != Precision.bf16
        else tokens_per_s * fpt / (sku.peak_bf16_tflops * 1e12)
    )
    return SpeedEstimate(
        tokens_per_s_per_gpu=tokens_per_s,
        mfu_frac=mfu_frac,
        sync_efficiency=efficiency,
        step_compute_s=step_s,
        exposed_comm_s=exposed,
    )


def _exposed_comm_s(
    arch: ModelArch,
    layout: Layout,
    sku: GpuSku,
    gpus_per_node: int,
    fabric_gbit: float,
    step_s: float,
) -> float:
    """Seconds per step of FSDP all-gather/reduce-scatter and HSDP all-reduce not hidden."""
    fabric_bytes_s = max(fabric_gbit, 0.1) / 8 * 1e9 * _FABRIC_EFFICIENCY
    nvlink_bytes_s = sku.nvlink_gb_per_s * 1e9 * _FABRIC_EFFICIENCY
    params_here = arch.params / (layout.tp * layout.pp)
    shard = layout.dp_shard * layout.cp
    comm = 0.0
    if shard > 1:
        # Forward and backward all-gather of bf16 params, reduce-scatter of bf16 grads.
        fsdp_bytes = 3 * 2.0 * params_here * (shard - 1) / shard
        crosses_nodes = shard * layout.tp > gpus_per_node
        comm += fsdp_bytes / (fabric_bytes_s if crosses_nodes else nvlink_bytes_s)
    if layout.dp_replicate > 1:
        # HSDP: each GPU all-reduces its gradient shard across replica groups.
        r = layout.dp_replicate
        hsdp_bytes = 2 * 2.0 * params_here / shard * (r - 1) / r
        comm += hsdp_bytes / fabric_bytes_s
    return max(0.0, comm - _OVERLAP * step_s) + 0.02 * comm
