"""The planner's refusals: each a stable code, a human sentence, evidence numbers, a suggestion.

Codes (API.md): `booking.not_active`, `memory.does_not_fit`, `parallelism.tp_exceeds_node`,
`parallelism.pp_unneeded`, `parallelism.degrees_mismatch`, `precision.unsupported_on_sku`,
`scale.batch_too_large`, `fabric.too_slow_for_sync_dp`, `budget.exceeds_ceiling`,
`booking.window_too_short`, plus `booking.unsupported_sku` and `model.size_unsupported`
for inputs the desk cannot plan at all.
"""

from __future__ import annotations

import math
from decimal import Decimal

from ito_tui.contract import ActivationCheckpoint, Booking, BookingStatus, Plan, Precision, Refusal

from .catalog import GPU_SKUS, GpuSku, ModelArch
from .plan_context import PlanContext
from .plan_layout import TP_MAX_PARAMS, usable_gib
from .plan_perf import GIB, STATE_BYTES_PER_PARAM, Layout, memory_estimate
from .plan_schedule import Schedule
from .plan_words import article, compact, fabric_name

__all__ = [
    "CRITICAL_BATCH_REFUSE_FACTOR",
    "SYNC_EFFICIENCY_REFUSE",
    "check_booking",
    "check_ceiling",
    "check_cost_and_window",
    "check_fabric",
    "check_inputs",
    "check_memory",
    "check_plan",
    "check_scale",
    "critical_batch_tokens",
]

SYNC_EFFICIENCY_REFUSE = 0.5
"""Below this share of step time spent computing, synchronous data parallelism is refused."""
CRITICAL_BATCH_REFUSE_FACTOR = 3.0
"""Refuse when one sequence per rank already makes the global batch this many times too big."""


def _usd(value: Decimal) -> str:
    return f"{value:.2f}"


def critical_batch_tokens(params: float, tokens: int) -> float:
    """DeepSeek LLM's fit of the optimal batch: 0.292 · C^0.3271 tokens, with C = 6·N·D."""
    return 0.2920 * math.pow(6.0 * params * max(tokens, 1), 0.3271)


def check_booking(booking: Booking) -> list[Refusal]:
    """Only a `completed` booking (nodes handed over until `ends_at`) can take a run."""
    if str(booking.status) == BookingStatus.completed.value:
        return []
    return [
        Refusal(
            code="booking.not_active",
            reason=f"Booking {booking.booking_id} is {booking.status}; only completed "
            "bookings have nodes handed over to run on.",
            field="booking_id",
            evidence={"status": str(booking.status), "booking_id": booking.booking_id},
            suggestion="Pick a completed booking from the desk.",
        )
    ]


def check_inputs(booking: Booking, arch: ModelArch) -> list[Refusal]:
    """Inputs the desk cannot plan at all: an unknown GPU SKU, a degenerate model or booking."""
    out = []
    if booking.gpu_sku not in GPU_SKUS:
        out.append(
            Refusal(
                code="booking.unsupported_sku",
                reason=f"The planner has no performance model for {booking.gpu_sku}.",
                field="booking_id",
                evidence={"gpu_sku": booking.gpu_sku, "known_skus": list(GPU_SKUS)},
                suggestion="Pick a booking on " + ", ".join(GPU_SKUS) + ".",
            )
        )
    if arch.params < 1e6:
        out.append(
            Refusal(
                code="model.size_unsupported",
                reason=f"{article(arch.size, capital=True)} model is too small to train on a "
                "GPU booking.",
                field="model_size",
                evidence={"params": arch.params},
                suggestion="Use one of the desk's sizes, 150M or larger.",
            )
        )
    if booking.gpu_count < 1:
        out.append(
            Refusal(
                code="booking.no_gpus",
                reason=f"Booking {booking.booking_id} lists no GPUs.",
                field="booking_id",
                evidence={"node_count": booking.node_count, "gpus_per_node": booking.gpus_per_node},
                suggestion="Pick a booking with at least one node.",
            )
        )
    return out


def _min_nodes(arch: ModelArch, sku: GpuSku, gpus_per_node: int) -> int:
    # State must leave ~20 % of usable HBM for activations, logits and runtime overhead.
    state_gib = STATE_BYTES_PER_PARAM * arch.params / GIB
    gpus = math.ceil(state_gib / (0.8 * usable_gib(sku)))
    return max(1, math.ceil(gpus / max(gpus_per_node, 1)))


def check_memory(ctx: PlanContext) -> list[Refusal]:
    """`memory.does_not_fit` when no layout fits the SKU's HBM."""
    if ctx.choice.fits:
        return []
    memory = ctx.choice.memory
    gpn = ctx.booking.gpus_per_node
    nodes = _min_nodes(ctx.arch, ctx.sku, gpn)
    state_floor = STATE_BYTES_PER_PARAM * ctx.arch.params / ctx.layout.world_size / GIB
    return [
        Refusal(
            code="memory.does_not_fit",
            reason=(
                f"{article(ctx.arch.size, capital=True)} model needs about "
                f"{memory.total_gib:,.0f} GiB per GPU even fully sharded over "
                f"{ctx.layout.world_size} GPUs, and one {ctx.sku.name} has {ctx.sku.hbm_gib:g} GiB."
            ),
            field="model_size",
            evidence={
                "est_mem_per_gpu_gib": round(memory.total_gib, 1),
                "hbm_per_gpu_gib": ctx.sku.hbm_gib,
                "state_gib_per_gpu": round(state_floor, 1),
                "activations_gib_per_gpu": round(memory.activations_gib, 1),
                "params": ctx.arch.params,
                "world_size": ctx.layout.world_size,
                "min_nodes_needed": nodes,
            },
            suggestion=(
                f"Use a booking with at least {nodes} nodes of {gpn} {ctx.sku.name}, "
                "a larger-memory SKU, or a smaller model."
            ),
        )
    ]


def check_plan(plan: Plan, *, booking: Booking, arch: ModelArch, sku: GpuSku) -> list[Refusal]:
    """Structural checks any plan must pass, whoever proposed it (the planner checks its own)."""
    out = []
    world = booking.gpu_count
    product = plan.dp_replicate * plan.dp_shard * plan.tp * plan.pp * plan.cp
    if product != plan.world_size or plan.world_size != world:
        out.append(
            Refusal(
                code="parallelism.degrees_mismatch",
                reason=f"Parallel degrees multiply to {product} GPUs but the booking has {world}.",
                field="booking_id",
                evidence={"degrees_product": product, "world_size": plan.world_size, "gpus": world},
                suggestion="Choose degrees whose product is the booking's GPU count.",
            )
        )
    if plan.tp > booking.gpus_per_node:
        out.append(
            Refusal(
                code="parallelism.tp_exceeds_node",
                reason=(
                    f"Tensor parallelism of {plan.tp} would cross nodes: each node has "
                    f"{booking.gpus_per_node} GPUs, and TP traffic needs NVLink."
                ),
                field="booking_id",
                evidence={"tp": plan.tp, "gpus_per_node": booking.gpus_per_node},
                suggestion=f"Keep TP at {booking.gpus_per_node} or less; shard the rest with FSDP.",
            )
        )
    if plan.pp > 1 and arch.params <= TP_MAX_PARAMS and _fits_without_pp(plan, arch, sku):
        out.append(
            Refusal(
                code="parallelism.pp_unneeded",
                reason=(
                    f"{article(arch.size, capital=True)} model fits with FSDP and TP alone; "
                    "pipeline parallelism of "
                    f"{plan.pp} would only add bubbles."
                ),
                field="model_size",
                evidence={"pp": plan.pp, "params": arch.params},
                suggestion="Fold the pipeline stages into FSDP sharding (pp = 1).",
            )
        )
    precision = str(plan.precision)
    if precision == Precision.mxfp8.value and not sku.supports_mxfp8:
        out.append(
            Refusal(
                code="precision.unsupported_on_sku",
                reason=(
                    f"mxfp8 needs Blackwell tensor cores with block scaling; {sku.name} is "
                    f"{sku.architecture.capitalize()}."
                ),
                field="booking_id",
                evidence={"precision": precision, "gpu_sku": sku.name},
                suggestion="Use float8_rowwise on Hopper, or a B200 booking for mxfp8.",
            )
        )
    return out


def _fits_without_pp(plan: Plan, arch: ModelArch, sku: GpuSku) -> bool:
    layout = Layout(
        dp_replicate=plan.dp_replicate,
        dp_shard=plan.dp_shard * plan.pp,
        tp=plan.tp,
        pp=1,
        cp=plan.cp,
        local_batch_seqs=max(1, plan.local_batch_seqs // plan.pp),
        seq_len=max(1, plan.global_batch_tokens // max(plan.local_batch_seqs, 1))
        // max(plan.dp_replicate * plan.dp_shard, 1),
        activation_checkpoint=ActivationCheckpoint(str(plan.activation_checkpoint)),
        precision=Precision(str(plan.precision)),
        compile=plan.compile,
    )
    return memory_estimate(arch, layout).total_gib <= usable_gib(sku)


def check_scale(ctx: PlanContext) -> list[Refusal]:
    """`scale.batch_too_large`: the booking is so big that even batch 1 per rank overshoots."""
    layout = ctx.layout
    dp = layout.dp_replicate * layout.dp_shard
    min_global = layout.seq_len * dp
    if min_global <= CRITICAL_BATCH_REFUSE_FACTOR * ctx.critical_batch:
        return []
    useful_dp = max(1, int(CRITICAL_BATCH_REFUSE_FACTOR * ctx.critical_batch // layout.seq_len))
    gpn = ctx.booking.gpus_per_node
    # Whole nodes only: a booking is made of nodes.
    useful_gpus = max(gpn, useful_dp * layout.tp * layout.pp * layout.cp // gpn * gpn)
    return [
        Refusal(
            code="scale.batch_too_large",
            reason=(
                f"{layout.world_size} GPUs are far too many for {article(ctx.arch.size)} model on "
                f"{compact(ctx.target_tokens)} tokens: one sequence per GPU already makes a "
                f"{compact(min_global)}-token batch, over {CRITICAL_BATCH_REFUSE_FACTOR:g}× the "
                f"critical batch of {compact(ctx.critical_batch)}, so most GPUs would be wasted."
            ),
            field="booking_id",
            evidence={
                "min_global_batch_tokens": min_global,
                "critical_batch_tokens": round(ctx.critical_batch),
                "world_size": layout.world_size,
                "useful_gpus": useful_gpus,
            },
            suggestion=(
                f"Use a booking with at most {useful_gpus} GPUs, a larger model, "
                "or more target tokens."
            ),
        )
    ]


def check_fabric(ctx: PlanContext) -> list[Refusal]:
    """`fabric.too_slow_for_sync_dp`: collectives over the fabric would dominate each step."""
    speed = ctx.speed
    if speed.sync_efficiency >= SYNC_EFFICIENCY_REFUSE:
        return []
    fabric = ctx.booking.fabric
    return [
        Refusal(
            code="fabric.too_slow_for_sync_dp",
            reason=(
                f"Over {fabric_name(fabric.kind)} at {fabric.gbit_per_s_per_gpu:g} Gbit/s per "
                f"GPU, each step would wait {speed.exposed_comm_s:.1f} s on gradient and "
                f"parameter traffic for {speed.step_compute_s:.1f} s of compute "
                f"({speed.sync_efficiency:.0%} useful)."
            ),
            field="booking_id",
            evidence={
                "fabric": str(fabric.kind),
                "gbit_per_s_per_gpu": fabric.gbit_per_s_per_gpu,
                "step_compute_s": round(speed.step_compute_s, 2),
                "exposed_comm_s": round(speed.exposed_comm_s, 2),
                "sync_efficiency_frac": round(speed.sync_efficiency, 3),
            },
            suggestion="Use an InfiniBand or RoCE booking, or one whose nodes each hold a "
            "full model replica.",
        )
    ]


def check_ceiling(budget: Decimal, max_budget_usd: Decimal) -> list[Refusal]:
    """`budget.exceeds_ceiling` when the spec's budget is over the desk's limit."""
    if budget <= max_budget_usd:
        return []
    return [
        Refusal(
            code="budget.exceeds_ceiling",
            reason=f"A budget of ${budget:,.2f} is over the desk's ceiling of "
            f"${max_budget_usd:,.2f}.",
            field="budget_usd",
            evidence={"budget_usd": _usd(budget), "max_budget_usd": _usd(max_budget_usd)},
            suggestion=f"Set budget_usd to ${max_budget_usd:,.2f} or less.",
        )
    ]


def check_cost_and_window(
    ctx: PlanContext, sched: Schedule, *, plan_feasible: bool
) -> tuple[list[Refusal], bool]:
    """p50 cost against the budget and p50 wall clock against the booking window.

    Only a feasible plan is judged (numbers of a plan that cannot run would only repeat its
    refusal), and the window not at all for an expired or cancelled booking
    (`booking.not_active` says it). Returns (refusals, fits_window).
    """
    out: list[Refusal] = []
    budget = ctx.spec.budget_usd
    start = max(ctx.now, ctx.booking.starts_at)
    # Compare hours, not datetimes: a hopeless plan's p50 can overflow datetime arithmetic.
    left_h = max(0.0, (ctx.booking.ends_at - start).total_seconds() / 3600)
    fits_window = sched.wall_clock_h_p50 <= left_h
    if not plan_feasible:
        return out, fits_window
    if sched.usd_p50 > budget:
        scale = float(budget / sched.usd_p50) if sched.usd_p50 > 0 else 0.0
        out.append(
            Refusal(
                code="budget.exceeds_ceiling",
                reason=(
                    f"The run would cost about ${sched.usd_p50:,.2f} (p50), over the "
                    f"${budget:,.2f} budget."
                ),
                field="budget_usd",
                evidence={
                    "usd_p50": _usd(sched.usd_p50),
                    "usd_p90": _usd(sched.usd_p90),
                    "budget_usd": _usd(budget),
                },
                suggestion=(
                    f"Raise budget_usd to at least ${sched.usd_p50:,.2f}, or cut target_tokens "
                    f"to about {compact(ctx.target_tokens * scale * 0.95)}."
                ),
            )
        )
    ended = str(ctx.booking.status) in (BookingStatus.expired.value, BookingStatus.cancelled.value)
    if not fits_window and not ended:
        scale = left_h / sched.wall_clock_h_p50 if sched.wall_clock_h_p50 > 0 else 0.0
        out.append(
            Refusal(
                code="booking.window_too_short",
                reason=(
                    f"The run needs about {sched.wall_clock_h_p50:,.1f} h (p50) but booking "
                    f"{ctx.booking.booking_id} ends in {left_h:,.1f} h."
                ),
                field="target_tokens",
                evidence={
                    "wall_clock_h_p50": round(sched.wall_clock_h_p50, 2),
                    "hours_left": round(left_h, 2),
                    "ends_at": ctx.booking.ends_at.isoformat(),
                },
                suggestion=(
                    f"Cut target_tokens to about {compact(ctx.target_tokens * scale * 0.95)}, "
                    "or pick a booking that ends later."
                ),
            )
        )
    return out, fits_window
