"""Believable numbers for the simulator: noise, loss curves, throughput, goodput, gates.

All randomness is a pure function of (seed, labels), so the same seed and spec
give the same run whatever the wall-clock tick pattern or restarts.
"""

from __future__ import annotations

import hashlib
import math
import struct
from typing import Any

CHINCHILLA = (1.69, 406.4, 410.7, 0.34, 0.28)
"""E, A, B, alpha, beta of Hoffmann et al. (2022): L(N, D) = E + A/N^a + B/D^b."""

SPIKE_DETECT_Z = 6.0
"""Loss spikes are detected at z > 6 over a 128-step window (OLMo-core)."""
SPIKE_ESCALATE_Z = 12.0
"""Below this z the batch is skipped automatically; at or above it a person decides."""
SPIKE_WINDOW = 128
SLO_DETECT_S = 600.0
SLO_RESUME_S = 900.0


def uniform(seed: int, *labels: object) -> float:
    """A deterministic uniform number in [0, 1) for (seed, labels)."""
    digest = hashlib.blake2b(repr((seed, *labels)).encode(), digest_size=8).digest()
    value: int = struct.unpack("<Q", digest)[0]
    return value / 2**64


def normal(seed: int, *labels: object) -> float:
    """A deterministic standard normal number (Box-Muller)."""
    u1 = max(uniform(seed, *labels, "a"), 1e-12)
    u2 = uniform(seed, *labels, "b")
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)


def pretrain_loss(params: float, tokens: float) -> float:
    """Chinchilla-style loss after `tokens` tokens on a `params`-parameter model."""
    e, a, b, alpha, beta = CHINCHILLA
    return float(e + a / params**alpha + b / max(tokens, 5e7) ** beta)


def stage_loss(stage: str, params: float, tokens_total: float, frac: float) -> float:
    """The noise-free loss of a stage at progress `frac` (0..1)."""
    if stage in ("pretrain", "mid_train", "long_context"):
        # Mid-training and long-context data shift the loss up a little, then it settles.
        shift = {"pretrain": 0.0, "mid_train": 0.06, "long_context": 0.09}[stage]
        return pretrain_loss(params, tokens_total) + shift * (1.0 - frac) ** 2
    if stage == "sft":
        return 1.25 - 0.35 * math.sqrt(frac)
    if stage == "dpo":
        return 0.693 - 0.23 * math.sqrt(frac)
    return 0.12 - 0.07 * frac


def learning_rate(stage: str, params: float, frac: float) -> float:
    """Warmup then cosine decay; peak shrinks with model size."""
    peak = {"sft": 2e-5, "dpo": 5e-7, "rlvr": 1e-6}.get(stage, 3e-4 * (8e9 / params) ** 0.25)
    if stage == "mid_train":
        peak *= 0.3
    if frac < 0.02:
        return float(peak * frac / 0.02)
    return float(peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))))


def rl_stats(seed: int, q: int, frac: float) -> dict[str, Any]:
    """GRPO-style rollout statistics with bounded staleness (DAPO filtering)."""
    return {
        "reward_mean": round(0.22 + 0.4 * frac + 0.02 * normal(seed, "rw", q), 4),
        "entropy": round(max(0.05, 0.95 - 0.45 * frac + 0.02 * normal(seed, "en", q)), 4),
        "max_staleness_steps": int(uniform(seed, "st", q) * 4),
        "staleness_bound": 4,
        "filtered_group_frac": round(0.12 + 0.1 * uniform(seed, "fg", q), 4),
        "ess_frac": round(0.86 + 0.12 * uniform(seed, "ess", q), 4),
    }


def passes(value: float, comparator: str, threshold: float) -> bool:
    return {
        ">=": value >= threshold,
        ">": value > threshold,
        "<=": value <= threshold,
        "<": value < threshold,
    }.get(comparator, value >= threshold)


def gate_value(
    seed: int,
    label: str,
    expected: float,
    stderr: float,
    comparator: str,
    threshold: float,
    *,
    fail: bool,
) -> float:
    """A benchmark score near `expected`; forced to the failing side when `fail`,
    kept on the passing side otherwise (the scenario decides, not the noise)."""
    sign = -1.0 if comparator in (">=", ">") else 1.0
    margin = max(stderr, abs(threshold) * 0.01, 1e-3)
    if fail:
        return round(threshold + sign * (3.0 + uniform(seed, label)) * margin, 4)
    value = expected + stderr * normal(seed, label)
    if not passes(value, comparator, threshold):
        value = threshold - sign * (1.0 + uniform(seed, label, "m")) * margin
    return round(value, 4)


def clamp01(x: float) -> float:
    return min(1.0, max(0.0, x))


def open_metrics(
    seed: int,
    stage: str,
    q: int,
    *,
    sample: dict[str, Any],
    params: float,
    mem_total_gib: float,
    step_time_s: float,
    spike_z: float | None,
) -> dict[str, float | None]:
    """The further scalars torchtitan logs each step, under its own names (API.md v1.1).

    Derived from the sample's fixed fields so the two never disagree. An escalated loss
    spike (z >= SPIKE_ESCALATE_Z) shows as a NaN `global_max_loss`: one rank diverged,
    and that is data (the wire says "NaN"). Values are rounded: every sample carries
    these, and the stored sample is what telemetry pages serve.
    """
    loss, tps = float(sample["loss"]), float(sample["tokens_per_s_per_gpu"])
    reserved = float(sample["mem_max_reserved_gib"])
    max_loss = loss * (1.01 + 0.02 * uniform(seed, "maxloss", stage, q))
    if spike_z is not None and spike_z >= SPIKE_ESCALATE_Z:
        max_loss = math.nan
    out: dict[str, float | None] = {
        "loss_metrics/global_avg_loss": loss,
        "loss_metrics/global_max_loss": max_loss if math.isnan(max_loss) else round(max_loss, 4),
        "grad_norm": sample["grad_norm"],
        "throughput(tps)": round(tps),
        "tflops": round(6.0 * params * tps / 1e12, 2),
        "memory/max_active(GiB)": round(reserved * 0.93, 2),
        "memory/max_reserved(%)": round(100.0 * reserved / max(mem_total_gib, 1.0), 2),
        "memory/num_alloc_retries": float(uniform(seed, "retries", stage, q) < 0.02),
        "time_metrics/end_to_end(s)": round(step_time_s, 3),
        "time_metrics/data_loading(%)": round(0.4 + 0.8 * uniform(seed, "dl", stage, q), 2),
        "lr": float(f"{float(sample['lr']):.6g}"),
    }
    if sample.get("mfu_frac") is not None:
        out["mfu(%)"] = round(100.0 * float(sample["mfu_frac"]), 2)
    if q % 8 == 0 and stage in ("pretrain", "mid_train", "long_context"):
        out["validation_metrics/loss"] = round(loss * (1.012 + 0.004 * normal(seed, "val", q)), 4)
    rl = sample.get("rl")
    if rl:
        frac = float(rl.get("reward_mean", 0.0))
        out["reward/mean"] = rl["reward_mean"]
        out["rollout/response_length/mean"] = round(380.0 + 520.0 * frac, 1)
        out["train_batch/policy_age_max"] = float(rl["max_staleness_steps"])
    return out
