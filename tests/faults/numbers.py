"""Hostile numbers: rewrites of desk_sim's JSON with what API.md v1.1 lets a backend send.

Each rewrite is a `Tamper.poison` function (every JSON body and every SSE envelope).
`json.dumps` writes a float NaN or infinity as the bare tokens `NaN` / `Infinity`
(one wire form); `as_strings` turns them into the strings `"NaN"` / `"Infinity"` /
`"-Infinity"` (the other form API.md names).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

NAN = float("nan")
INF = float("inf")
HUGE_INT = 10**400
"""An int no float can hold (float(HUGE_INT) raises OverflowError)."""

MEASURES = frozenset(
    {
        # telemetry samples
        "loss", "loss_z", "grad_norm", "lr", "tokens_per_s_per_gpu", "mem_max_reserved_gib",
        "interruptions_per_1k_gpu_hours", "reward_mean", "entropy",
        # checkpoints (sample stats, checkpoint resources, checkpoint.saved)
        "size_gb", "blocking_s", "persist_s", "write_gb_per_s", "age_s",
        # stage progress, spend, gates, faults
        "eta_s", "gpu_hours", "value", "stderr", "threshold", "reference_value",
        "detected_after_s", "resumed_after_s",
    }
)  # fmt: skip
"""Measured numbers: any float is legal, NaN and ±Infinity included."""
FRACS = frozenset(
    {
        "scheduling_frac", "runtime_frac", "program_frac", "ml_productivity_frac", "mfu_frac",
        "filtered_group_frac", "ess_frac", "frac", "stage_progress_frac",
    }
)  # fmt: skip
"""Measured fractions: 0..1 when finite, else NaN or ±Infinity."""
COUNTS = frozenset({"tokens_seen", "tokens", "total_tokens", "step", "total_steps", "last_step"})
"""Counts and steps: ints, of any size JSON can write."""
NULLABLE = frozenset(
    {
        "loss", "loss_z", "grad_norm", "lr", "tokens_per_s_per_gpu", "mem_max_reserved_gib",
        "interruptions_per_1k_gpu_hours", "mfu_frac", "scheduling_frac", "runtime_frac",
        "program_frac", "ml_productivity_frac", "reward_mean", "entropy",
        "filtered_group_frac", "ess_frac", "size_gb", "blocking_s", "persist_s",
        "write_gb_per_s", "age_s", "eta_s",
    }
)  # fmt: skip
"""Measurements of a telemetry sample or a stage's progress a backend may send as null."""


def rewrite(obj: Any, fn: Callable[[str, Any], Any]) -> Any:
    """`obj` with every dict value replaced by `fn(key, value)` (bottom-up)."""
    if isinstance(obj, dict):
        return {k: fn(k, rewrite(v, fn)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rewrite(v, fn) for v in obj]
    return obj


def as_strings(obj: Any) -> Any:
    """`obj` with every non-finite float written as the string API.md v1.1 names."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else "Infinity" if obj > 0 else "-Infinity"
    if isinstance(obj, dict):
        return {k: as_strings(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [as_strings(v) for v in obj]
    return obj


def is_sample(obj: Any) -> bool:
    return isinstance(obj, dict) and "loss" in obj and "tokens_seen" in obj


def diverge(obj: Any) -> Any:
    """A diverged run: telemetry losses finite in pretrain, NaN in mid-train, +Infinity after.

    Keyed on the sample's stage, so the live stream and the `/telemetry` backfill agree.
    """
    if is_sample(obj):
        stage = obj.get("stage")
        if stage == "mid_train":
            return {**obj, "loss": NAN}
        if stage != "pretrain":
            return {**obj, "loss": INF}
        return obj
    if isinstance(obj, dict):
        return {k: diverge(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [diverge(v) for v in obj]
    return obj


def everywhere() -> Callable[[Any], Any]:
    """Every measured number, fraction and count gets a hostile but legal value, cycling
    through NaN, +Infinity, -Infinity, ±1e308 (measures), NaN/±Infinity (fractions) and
    10**400 (counts), so one run shows each kind in each field."""
    measures = itertools.cycle([NAN, INF, -INF, 1e308, -1e308])
    fracs = itertools.cycle([NAN, INF, -INF])
    counts = itertools.cycle([HUGE_INT, 7])

    def fn(key: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value
        if key in MEASURES:
            return next(measures)
        if key in FRACS:
            return next(fracs)
        if key in COUNTS:
            return next(counts)
        return value

    return lambda obj: rewrite(obj, fn)


def nulls(obj: Any) -> Any:
    """Every measurement of a telemetry sample and of a stage's progress sent as null."""

    def null(k: str, v: Any) -> Any:
        return None if k in NULLABLE and isinstance(v, int | float) else v

    if is_sample(obj) or (isinstance(obj, dict) and "eta_s" in obj):
        return rewrite(obj, null)
    if isinstance(obj, dict):
        return {k: nulls(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [nulls(v) for v in obj]
    return obj
