"""Human sentences for a plan: why each choice was made (rationale) and what to watch (warnings)."""

from __future__ import annotations

from dataclasses import replace

from ito_tui.contract import ActivationCheckpoint, BookingStatus, FabricKind, Precision, Warning_

from .catalog import MODEL_SIZES
from .plan_context import PlanContext
from .plan_layout import LONG_CONTEXT_SEQ_LEN, long_context_seq_len, usable_gib
from .plan_perf import memory_estimate, precision_speedup
from .plan_schedule import Schedule
from .plan_words import article, compact, fabric_name

__all__ = ["plan_warnings", "rationale"]

SLOW_SYNC_WARN = 0.85
"""Warn when less than this share of each step is compute (collectives partly exposed)."""
MEMORY_TIGHT_FRAC = 0.97


def _nodes(count: int) -> str:
    return {1: "the node", 2: "both nodes"}.get(count, f"all {count} nodes")


def _parallelism(ctx: PlanContext) -> list[str]:
    layout, arch, mem = ctx.layout, ctx.arch, ctx.choice.memory
    out = []
    sharded = layout.dp_shard * layout.cp > 1
    if layout.tp == 1 and layout.pp == 1:
        out.append(
            f"{arch.size} needs only FSDP: each GPU keeps 1/{layout.shard_group} of the 16 "
            f"bytes/param of weights, gradients and Adam state ({mem.state_gib:.1f} GiB)."
        )
    else:
        rest = "FSDP shards the rest" if sharded else "each TP group holds a whole replica"
        out.append(
            f"{arch.size} is too large for FSDP alone: tensor parallelism of {layout.tp} inside "
            f"each NVLink node splits every layer and {rest} "
            f"({mem.state_gib:.1f} GiB of state per GPU)."
        )
    if layout.pp > 1:
        out.append(
            f"Pipeline parallelism of {layout.pp} splits the {arch.layers} layers into stages "
            f"so each rank gathers only {compact(arch.params / layout.tp / layout.pp)} params "
            f"per step; {layout.local_batch_seqs} microbatches keep the bubble small."
        )
    if layout.cp > 1:
        out.append(
            f"Context parallelism of {layout.cp}: each {layout.seq_len:,}-token sequence is "
            f"split so a GPU holds {layout.seq_len // layout.cp:,} tokens of activations."
        )
    nodes = ctx.booking.node_count
    if layout.dp_replicate > 1:
        group_nodes = nodes // layout.dp_replicate
        unit = "node" if group_nodes == 1 else f"{group_nodes} nodes"
        crossing = "only gradients cross" if group_nodes == 1 else "parameters and gradients cross"
        out.append(
            f"torchft HSDP with {layout.dp_replicate} replica groups (one per {unit}): "
            f"{crossing} the {fabric_name(ctx.booking.fabric.kind)} fabric, and a failed node "
            "drops one "
            "replica instead of stopping the run."
        )
    elif nodes > 1:
        out.append(
            f"One replica sharded over {_nodes(nodes)}: the model state needs every GPU, so "
            "there is no spare replica for torchft to fail over to."
        )
    return out


def _precision(ctx: PlanContext) -> str:
    precision = ctx.layout.precision
    gain = precision_speedup(ctx.sku, precision, ctx.arch.params)
    if precision == Precision.mxfp8:
        return (
            f"mxfp8 on {ctx.sku.name}: Blackwell tensor cores scale fp8 per 32-element block, "
            f"≈ {gain - 1:.0%} faster than bf16 here; MFU is not reported under fp8."
        )
    if precision == Precision.float8_rowwise:
        return (
            f"float8 rowwise on {ctx.sku.name} (Hopper fp8 tensor cores, per-row scales): "
            f"≈ {gain - 1:.0%} faster than bf16 here; MFU is not reported under fp8."
        )
    return f"bf16: {article(ctx.arch.size)} model's matmuls are too small for fp8 to pay off."


def _memory(ctx: PlanContext) -> str:
    layout, mem = ctx.layout, ctx.choice.memory
    limit = usable_gib(ctx.sku)
    if not ctx.choice.fits:
        return (
            f"Nothing fits: even the leanest layout (fully sharded, full activation "
            f"checkpointing, one sequence per rank) needs {mem.total_gib:,.1f} GiB per GPU "
            f"of the {ctx.sku.hbm_gib:g} GiB {article(ctx.sku.name.split('-')[0])} has."
        )
    ac = ActivationCheckpoint(layout.activation_checkpoint)
    if ac == ActivationCheckpoint.none:
        return (
            f"No activation checkpointing: activations fit ({mem.total_gib:.1f} of "
            f"{ctx.sku.hbm_gib:g} GiB per GPU), so nothing is recomputed."
        )
    lighter = (
        ActivationCheckpoint.none if ac == ActivationCheckpoint.selective
        else ActivationCheckpoint.selective
    )  # fmt: skip
    without = memory_estimate(ctx.arch, replace(layout, activation_checkpoint=lighter)).total_gib
    return (
        f"{ac.value.capitalize()} activation checkpointing: with {lighter.value} it would need "
        f"{without:.1f} GiB per GPU (limit {limit:.1f}); with {ac.value}, {mem.total_gib:.1f} "
        f"of {ctx.sku.hbm_gib:g} GiB."
    )


def rationale(ctx: PlanContext) -> list[str]:
    """Short sentences explaining each choice of the plan, most important first."""
    layout = ctx.layout
    out = _parallelism(ctx)
    out.append(_precision(ctx))
    out.append(_memory(ctx))
    out.append("torch.compile on: fused kernels, ≈ 16 % faster and less activation memory.")
    out.append(
        f"Local batch {layout.local_batch_seqs} × {layout.seq_len:,} tokens, global batch "
        f"{compact(layout.global_batch_tokens)} tokens; the critical batch for "
        f"{compact(ctx.target_tokens)} tokens of {article(ctx.arch.size)} model is about "
        f"{compact(ctx.critical_batch)} (DeepSeek LLM's fit)."
    )
    if ctx.long_context:
        out.append(
            f"The {ctx.spec.target_capability} target adds a long-context stage (2 % of "
            f"tokens) at {long_context_seq_len(layout.seq_len):,}-token sequences."
        )
    return out


def plan_warnings(ctx: PlanContext, sched: Schedule, *, feasible: bool = True) -> list[Warning_]:
    """Things an operator should know that do not refuse the run.

    Cost and window warnings are left out for an infeasible plan: its refusal says more.
    """
    out = []
    booking = ctx.booking
    unhealthy = [n.hostname for n in booking.nodes if not n.healthy]
    if unhealthy:
        survive = (
            "torchft keeps training on the healthy replica groups meanwhile"
            if ctx.layout.dp_replicate > 1
            else "with one replica over all nodes the run waits for the replacement"
        )
        out.append(
            Warning_(
                code="booking.unhealthy_node",
                message=f"{len(unhealthy)} node(s) report unhealthy ({', '.join(unhealthy)}): "
                f"expect a replace_node proposal; {survive}.",
            )
        )
    if booking.active_run_id is not None:
        out.append(
            Warning_(
                code="booking.busy",
                message=f"Booking {booking.booking_id} is running {booking.active_run_id}; "
                "a new run can start only after it ends.",
            )
        )
    if booking.node_count > 1 and str(booking.fabric.kind) == FabricKind.ethernet.value:
        out.append(
            Warning_(
                code="fabric.ethernet",
                message=f"Ethernet at {booking.fabric.gbit_per_s_per_gpu:g} Gbit/s per GPU is "
                "slow for cross-node collectives; only replica-per-node layouts stay efficient.",
            )
        )
    if 0.5 <= ctx.speed.sync_efficiency < SLOW_SYNC_WARN:
        out.append(
            Warning_(
                code="fabric.slow_for_sync_dp",
                message=f"Collectives are {1 - ctx.speed.sync_efficiency:.0%} of each step "
                "even after overlap; throughput is below what the GPUs could do.",
            )
        )
    if ctx.choice.fits and ctx.choice.memory.total_gib > MEMORY_TIGHT_FRAC * ctx.sku.hbm_gib:
        out.append(
            Warning_(
                code="memory.tight",
                message=f"Estimated {ctx.choice.memory.total_gib:.1f} of {ctx.sku.hbm_gib:g} GiB "
                "per GPU: little headroom for allocator spikes.",
            )
        )
    if feasible and sched.usd_p90 > ctx.spec.budget_usd >= sched.usd_p50:
        out.append(
            Warning_(
                code="budget.p90_over",
                message=f"p90 cost ${sched.usd_p90:,.2f} is over the ${ctx.spec.budget_usd:,.2f} "
                "budget: an unlucky run will hit the ceiling and stop.",
            )
        )
    if ctx.spec.seq_len >= LONG_CONTEXT_SEQ_LEN and ctx.layout.cp == 1:
        out.append(
            Warning_(
                code="plan.long_sequences_without_cp",
                message=f"{ctx.spec.seq_len:,}-token sequences without context parallelism.",
            )
        )
    left_h = (booking.ends_at - max(ctx.now, booking.starts_at)).total_seconds() / 3600
    ended = str(booking.status) in (BookingStatus.expired.value, BookingStatus.cancelled.value)
    if feasible and not ended and sched.wall_clock_h_p90 > left_h:
        out.append(
            Warning_(
                code="booking.window_tight",
                message="At p90 the run would still be going when the booking ends.",
            )
        )
    if ctx.spec.model_size not in MODEL_SIZES:
        out.append(
            Warning_(
                code="model.size_extrapolated",
                message=f"{ctx.spec.model_size} is not a desk size ({', '.join(MODEL_SIZES)}); "
                "its shape is extrapolated from Llama proportions.",
            )
        )
    return out
