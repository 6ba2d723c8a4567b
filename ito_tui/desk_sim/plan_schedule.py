"""Wall clock and cost of a planned run: per-stage tokens and hours, interruptions, p50/p90.

Tokens: `target_tokens` (default 20 × params) is split into pretrain (the rest), mid-train
(10 %) and long-context (2 %, only when the target asks for it); post-training stages are
small on top. Interruptions follow Llama 3's ≈ 2e-5 unplanned per GPU-hour (419 in 54 days
on 16K GPUs) times a chaos factor; each costs detection + resume + lost work (much less
under torchft HSDP, where only one replica group heals). Spend accrues for every hour the
booking is held, badput included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ito_tui.contract import StageName

__all__ = [
    "INTERRUPTIONS_PER_GPU_HOUR",
    "RunShape",
    "Schedule",
    "StagePlan",
    "poisson_quantile",
    "schedule",
    "stage_tokens",
]

INTERRUPTIONS_PER_GPU_HOUR = 2e-5
CHECKPOINT_INTERVAL_H = 0.5
DETECT_H = 5 / 60
RESUME_H = 10 / 60
TORCHFT_QUORUM_H = 2 / 60
STARTUP_H = 0.25
"""Image pull, NCCL init and torch.compile warm-up at the start of the run."""
PLAN_STAGE_H = 0.2
"""The plan stage profiles a few steps of the chosen layout."""
P90_PERF_SPREAD = 0.07
"""Relative spread of throughput between runs (stragglers, thermal, data loader)."""

MID_TRAIN_FRAC = 0.10
LONG_CONTEXT_FRAC = 0.02
LADDER_TOKENS = 4 * 20 * 150_000_000
"""The 150M ladder: four Chinchilla-optimal 150M runs on the custom data."""


@dataclass(frozen=True)
class RunShape:
    """What the schedule needs to know about the run and the booking."""

    params: float
    target_tokens: int
    world_size: int
    gpus_held: int
    node_count: int
    tokens_per_s_per_gpu: float
    long_context_speed_frac: float
    """Speed of the long-context stage relative to pretrain (longer attention)."""
    post_training_speed_frac: float
    """bf16 post-training speed relative to the (possibly fp8) pretrain speed."""
    ladder_tokens_per_s_per_gpu: float
    eval_tokens_per_s_per_gpu: float
    checkpoint_blocking_s: float
    dp_replicate: int
    torchft: bool
    price_usd_per_gpu_hour: Decimal
    chaos: float = 1.0


@dataclass(frozen=True)
class StagePlan:
    """One stage's share of the run at p50."""

    stage: StageName
    tokens: int
    compute_h: float
    gate_h: float
    wall_clock_h: float
    gpu_hours: float
    usd: Decimal


@dataclass(frozen=True)
class Schedule:
    """Per-stage breakdown and run totals."""

    stages: tuple[StagePlan, ...]
    base_h: float
    """Wall clock without interruptions."""
    wall_clock_h_p50: float
    wall_clock_h_p90: float
    expected_interruptions: float
    interruption_cost_h: float
    usd_p50: Decimal
    usd_p90: Decimal
    total_gpu_hours: float


def stage_tokens(
    target_tokens: int,
    *,
    long_context: bool,
    post_training: str | None,
    custom_data: bool,
) -> dict[StageName, int]:
    """Tokens per stage that runs; stages absent from the result are skipped."""
    out: dict[StageName, int] = {StageName.data_prep: 0}
    if custom_data:
        out[StageName.ladder] = LADDER_TOKENS
    out[StageName.plan] = 0
    mid = int(target_tokens * MID_TRAIN_FRAC)
    lc = int(target_tokens * LONG_CONTEXT_FRAC) if long_context else 0
    out[StageName.pretrain] = target_tokens - mid - lc
    out[StageName.mid_train] = mid
    if long_context:
        out[StageName.long_context] = lc
    chain = (StageName.sft, StageName.dpo, StageName.rlvr)
    shares = {StageName.sft: 0.005, StageName.dpo: 0.002, StageName.rlvr: 0.001}
    floors = {StageName.sft: 50_000_000, StageName.dpo: 20_000_000, StageName.rlvr: 10_000_000}
    if post_training is not None:
        last = chain.index(StageName(post_training))
        for stage in chain[: last + 1]:
            out[stage] = max(floors[stage], int(target_tokens * shares[stage]))
    return out


def poisson_quantile(mean: float, q: float) -> int:
    """Smallest k with P(X ≤ k) ≥ q for X ~ Poisson(mean) (normal tail for large means)."""
    if mean <= 0:
        return 0
    if mean > 500:
        return math.ceil(mean + 1.2816 * math.sqrt(mean))
    term = math.exp(-mean)
    total = term
    k = 0
    while total < q:
        k += 1
        term *= mean / k
        total += term
    return k


def _usd(value: float) -> Decimal:
    return Decimal(str(round(value, 4))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


# Throughput relative to pretrain: DPO runs the policy plus a frozen reference forward
# (8N vs 6N FLOPs/token); RLVR is dominated by rollout generation.
_STAGE_COST_FACTOR: dict[StageName, float] = {
    StageName.sft: 1.0,
    StageName.dpo: 6.0 / 8.0,
    StageName.rlvr: 0.2,
}
_EVAL_TOKENS = 150_000_000
_GATE_SETUP_H = 0.1


def _stage_hours(stage: StageName, tokens: int, shape: RunShape) -> tuple[float, float]:
    """(compute hours, gate hours) of one stage at steady state."""
    world_tps = shape.tokens_per_s_per_gpu * shape.world_size
    eval_s = _EVAL_TOKENS / (shape.eval_tokens_per_s_per_gpu * shape.world_size)
    gate_h = _GATE_SETUP_H + eval_s / 3600
    if stage is StageName.data_prep:
        # Dedup and decontamination run on the nodes' CPUs: ~25M tokens/s per node.
        return 0.3 + shape.target_tokens / (25e6 * shape.node_count) / 3600, 0.0
    if stage is StageName.plan:
        return PLAN_STAGE_H, 0.0
    if stage is StageName.ladder:
        ladder_tps = shape.ladder_tokens_per_s_per_gpu * shape.world_size
        return tokens / ladder_tps / 3600, _GATE_SETUP_H
    if stage is StageName.long_context:
        return tokens / (world_tps * shape.long_context_speed_frac) / 3600, gate_h
    factor = _STAGE_COST_FACTOR.get(stage)
    if factor is not None:
        speed = world_tps * shape.post_training_speed_frac * factor
        return tokens / speed / 3600, gate_h
    return tokens / world_tps / 3600, gate_h


def schedule(tokens: dict[StageName, int], shape: RunShape) -> Schedule:
    """Hours and dollars per stage and for the run, p50 and p90."""
    ckpt_overhead = 1.0 + shape.checkpoint_blocking_s / 3600 / CHECKPOINT_INTERVAL_H
    raw: list[tuple[StageName, int, float, float]] = []
    for stage, n in tokens.items():
        compute_h, gate_h = _stage_hours(stage, n, shape)
        raw.append((stage, n, compute_h * ckpt_overhead, gate_h))
    base_h = STARTUP_H + sum(c + g for _, _, c, g in raw)

    rate = INTERRUPTIONS_PER_GPU_HOUR * max(shape.chaos, 0.0)
    expected = rate * shape.gpus_held * base_h
    if shape.torchft and shape.dp_replicate > 1:
        # Survivors keep training; the failed replica group's share heals and rejoins.
        cost_h = TORCHFT_QUORUM_H + (DETECT_H + RESUME_H) / shape.dp_replicate
    else:
        cost_h = DETECT_H + RESUME_H + CHECKPOINT_INTERVAL_H / 2
    p50 = base_h + expected * cost_h
    p90 = base_h * (1.0 + P90_PERF_SPREAD) + poisson_quantile(expected, 0.9) * cost_h
    p90 = max(p90, p50)

    price = float(shape.price_usd_per_gpu_hour)
    stretch = p50 / base_h if base_h > 0 else 1.0
    stages = []
    for stage, n, compute_h, gate_h in raw:
        wall = (compute_h + gate_h) * stretch
        if stage is StageName.data_prep:
            wall += STARTUP_H * stretch
        stages.append(
            StagePlan(
                stage=stage,
                tokens=n,
                compute_h=compute_h,
                gate_h=gate_h,
                wall_clock_h=wall,
                gpu_hours=wall * shape.gpus_held,
                usd=_usd(wall * shape.gpus_held * price),
            )
        )
    usd_p50 = sum((s.usd for s in stages), Decimal("0.00"))
    usd_p90 = max(_usd(p90 * shape.gpus_held * price), usd_p50)
    return Schedule(
        stages=tuple(stages),
        base_h=base_h,
        wall_clock_h_p50=p50,
        wall_clock_h_p90=p90,
        expected_interruptions=expected,
        interruption_cost_h=cost_h,
        usd_p50=usd_p50,
        usd_p90=usd_p90,
        total_gpu_hours=p50 * shape.gpus_held,
    )
