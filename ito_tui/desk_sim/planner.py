"""The desk's planner and estimator: one pure code path for `POST /v1/estimates` and pre-flight.

`plan_and_estimate(spec, booking, max_budget_usd=, now=)` picks parallelism and precision
(see `plan_layout`), estimates memory and speed (`plan_perf`), wall clock and cost
(`plan_schedule`), and refuses impossible or wasteful combinations with the Refusal codes of
API.md (`plan_checks`). `Estimate.plan` is set whenever a layout could be formed, even a
refused one, so the operator sees the numbers behind the refusal; a non-empty `refusals`
list means refused.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from decimal import Decimal

from ito_tui.contract import (
    ActivationCheckpoint,
    Booking,
    Estimate,
    FaultTolerance,
    Plan,
    Precision,
    Refusal,
    StageEstimate,
    TrainingSpec,
)

from .catalog import GPU_SKUS, GpuSku, ModelArch, arch_for
from .plan_checks import (
    check_booking,
    check_ceiling,
    check_cost_and_window,
    check_fabric,
    check_inputs,
    check_memory,
    check_plan,
    check_scale,
    critical_batch_tokens,
)
from .plan_context import PlanContext
from .plan_explain import plan_warnings, rationale
from .plan_layout import choose_layout, choose_precision, long_context_seq_len
from .plan_perf import (
    Layout,
    SpeedEstimate,
    flops_per_token,
    memory_estimate,
    precision_speedup,
    speed_estimate,
)
from .plan_schedule import RunShape, Schedule, schedule, stage_tokens
from .targets import wants_long_context

__all__ = ["PlanContext", "check_plan", "plan_and_estimate"]

_CRITICAL_BATCH_CAP = 2.0
"""The planner halves the local batch until the global batch is at most 2× critical."""
_CHECKPOINT_BYTES_PER_PARAM = 12.0
"""A full DCP checkpoint: fp32 weights and both Adam moments."""
_D2H_GB_PER_S = 2.5
"""Effective device-to-host staging rate of async DCP (≈ 5 s blocking for 8B on 8 GPUs)."""


def _chaos(spec: TrainingSpec, chaos: float | None) -> float:
    if chaos is not None:
        return max(chaos, 0.0)
    if spec.sim is not None and spec.sim.chaos is not None:
        return spec.sim.chaos
    return 1.0


def _speed(arch: ModelArch, layout: Layout, sku: GpuSku, booking: Booking) -> SpeedEstimate:
    return speed_estimate(
        arch,
        layout,
        sku,
        gpus_per_node=booking.gpus_per_node,
        fabric_gbit_per_s_per_gpu=booking.fabric.gbit_per_s_per_gpu,
    )


def _shrink_batch(layout: Layout, critical: float) -> Layout:
    """Halve the local batch while the global batch exceeds 2× critical (memory only drops)."""
    while (
        layout.local_batch_seqs > 1 and layout.global_batch_tokens > _CRITICAL_BATCH_CAP * critical
    ):
        layout = replace(layout, local_batch_seqs=layout.local_batch_seqs // 2)
    return layout


def _ladder_tokens_per_s(sku: GpuSku, booking: Booking) -> float:
    """Speed of the 150M ladder runs: plain FSDP inside each node, bf16."""
    layout = Layout(
        dp_replicate=booking.node_count,
        dp_shard=booking.gpus_per_node,
        tp=1,
        pp=1,
        cp=1,
        local_batch_seqs=2,
        seq_len=8192,
        activation_checkpoint=ActivationCheckpoint.none,
        precision=Precision.bf16,
    )
    return _speed(arch_for("150M"), layout, sku, booking).tokens_per_s_per_gpu


def _run_shape(ctx: PlanContext) -> RunShape:
    layout, arch, sku, booking = ctx.layout, ctx.arch, ctx.sku, ctx.booking
    tps = max(ctx.speed.tokens_per_s_per_gpu, 1e-6)
    lc_seq = long_context_seq_len(layout.seq_len)
    lc_frac = 0.9 * flops_per_token(arch, layout.seq_len) / flops_per_token(arch, lc_seq)
    ckpt_gb_per_gpu = _CHECKPOINT_BYTES_PER_PARAM * arch.params / layout.shard_group / 1e9
    return RunShape(
        params=arch.params,
        target_tokens=ctx.target_tokens,
        world_size=layout.world_size,
        gpus_held=booking.gpu_count,
        node_count=booking.node_count,
        tokens_per_s_per_gpu=tps,
        long_context_speed_frac=lc_frac,
        post_training_speed_frac=1.0
        / precision_speedup(sku, Precision(layout.precision), arch.params),
        ladder_tokens_per_s_per_gpu=_ladder_tokens_per_s(sku, booking),
        eval_tokens_per_s_per_gpu=3.0 * tps,
        checkpoint_blocking_s=max(2.0, ckpt_gb_per_gpu / _D2H_GB_PER_S),
        dp_replicate=layout.dp_replicate,
        torchft=layout.dp_replicate > 1,
        price_usd_per_gpu_hour=booking.price_usd_per_gpu_hour,
        chaos=ctx.chaos,
    )


def _plan(ctx: PlanContext) -> Plan:
    layout = ctx.layout
    memory = ctx.choice.memory
    return Plan(
        world_size=layout.world_size,
        dp_replicate=layout.dp_replicate,
        dp_shard=layout.dp_shard,
        tp=layout.tp,
        pp=layout.pp,
        cp=layout.cp,
        precision=layout.precision,
        activation_checkpoint=layout.activation_checkpoint,
        compile=layout.compile,
        fault_tolerance=(
            FaultTolerance.torchft_hsdp if layout.dp_replicate > 1 else FaultTolerance.none
        ),
        local_batch_seqs=layout.local_batch_seqs,
        global_batch_tokens=layout.global_batch_tokens,
        est_mem_per_gpu_gib=round(memory.total_gib, 1),
        hbm_per_gpu_gib=ctx.sku.hbm_gib,
        est_tokens_per_s_per_gpu=round(ctx.speed.tokens_per_s_per_gpu, 0),
        est_mfu_frac=None if ctx.speed.mfu_frac is None else round(ctx.speed.mfu_frac, 3),
        rationale=rationale(ctx),
    )


def _estimate(
    plan: Plan | None,
    sched: Schedule | None,
    refusals: list[Refusal],
    *,
    budget: Decimal,
    fits_window: bool = False,
    ctx: PlanContext | None = None,
    feasible: bool = False,
) -> Estimate:
    if sched is None:
        return Estimate(
            plan=plan,
            total_gpu_hours=0.0,
            wall_clock_h_p50=0.0,
            wall_clock_h_p90=0.0,
            usd_p50=Decimal("0.00"),
            usd_p90=Decimal("0.00"),
            fits_budget=False,
            fits_booking_window=False,
            expected_interruptions=0.0,
            refusals=refusals,
        )
    return Estimate(
        plan=plan,
        stages=[
            StageEstimate(
                stage=s.stage,
                tokens=s.tokens,
                gpu_hours=round(s.gpu_hours, 2),
                wall_clock_h=round(s.wall_clock_h, 3),
                usd=s.usd,
            )
            for s in sched.stages
        ],
        total_gpu_hours=round(sched.total_gpu_hours, 2),
        wall_clock_h_p50=round(sched.wall_clock_h_p50, 2),
        wall_clock_h_p90=round(max(sched.wall_clock_h_p90, sched.wall_clock_h_p50), 2),
        usd_p50=sched.usd_p50,
        usd_p90=sched.usd_p90,
        fits_budget=sched.usd_p50 <= budget,
        fits_booking_window=fits_window,
        expected_interruptions=round(sched.expected_interruptions, 3),
        refusals=refusals,
        warnings=[] if ctx is None else plan_warnings(ctx, sched, feasible=feasible),
    )


def plan_and_estimate(
    spec: TrainingSpec,
    booking: Booking,
    *,
    max_budget_usd: Decimal,
    now: datetime,
    chaos: float | None = None,
) -> Estimate:
    """Plan `spec` on `booking` and estimate time and cost; refusals explain any "no".

    `chaos` scales the interruption rate (default: `spec.sim.chaos`, else 1.0 = Llama 3's
    ≈ 2e-5 unplanned interruptions per GPU-hour). Pure: same inputs, same Estimate.
    """
    refusals = check_booking(booking) + check_ceiling(spec.budget_usd, max_budget_usd)
    sku = GPU_SKUS.get(booking.gpu_sku)
    arch = arch_for(spec.model_size)
    unplannable = check_inputs(booking, arch)
    if sku is None or unplannable:
        return _estimate(None, None, refusals + unplannable, budget=spec.budget_usd)

    target_tokens = spec.target_tokens if spec.target_tokens is not None else int(20 * arch.params)
    critical = critical_batch_tokens(arch.params, target_tokens)
    choice = choose_layout(
        arch,
        sku,
        node_count=booking.node_count,
        gpus_per_node=booking.gpus_per_node,
        seq_len=spec.seq_len,
        precision=choose_precision(sku, arch),
        rank=lambda candidate: _speed(arch, candidate, sku, booking).tokens_per_s_per_gpu,
    )
    layout = _shrink_batch(choice.layout, critical) if choice.fits else choice.layout
    if layout is not choice.layout:
        choice = replace(choice, layout=layout, memory=memory_estimate(arch, layout))
    ctx = PlanContext(
        spec=spec,
        booking=booking,
        sku=sku,
        arch=arch,
        choice=choice,
        layout=layout,
        speed=_speed(arch, layout, sku, booking),
        target_tokens=target_tokens,
        critical_batch=critical,
        long_context=wants_long_context(spec.target_capability),
        chaos=_chaos(spec, chaos),
        now=now,
    )
    plan = _plan(ctx)
    structural = check_plan(plan, booking=booking, arch=arch, sku=sku)
    if not choice.fits:
        # A layout that cannot hold the model has no meaningful time or cost: show the plan
        # (its memory is the evidence) and zeros.
        return _estimate(
            plan, None, refusals + check_memory(ctx) + structural, budget=spec.budget_usd
        )

    tokens = stage_tokens(
        target_tokens,
        long_context=ctx.long_context,
        post_training=None if spec.post_training is None else str(spec.post_training),
        custom_data=str(spec.data_kind) == "custom",
    )
    sched = schedule(tokens, _run_shape(ctx))
    physical = structural + check_scale(ctx) + check_fabric(ctx)
    money, fits_window = check_cost_and_window(ctx, sched, plan_feasible=not physical)
    return _estimate(
        plan,
        sched,
        refusals + physical + money,
        budget=spec.budget_usd,
        fits_window=fits_window,
        ctx=ctx,
        feasible=not physical,
    )
