"""Two runs' specs, plans and estimates side by side: one row per field, differences marked.

Pure (no Textual): `spec_diff(a, b)` gives the rows the spec diff screen draws
(`tui/screens/spec_diff.py`). A field's texts are the backend's values as the rest of
the app writes them (`format`), backend strings made visible (`textsafe.safe`); whether
it `differs` is decided on the values, not on the texts, so two amounts that print alike
but differ are still marked, and a default that equals the other run's explicit value is
not (`tokens`: a spec without `target_tokens` trains 20 × params).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from ito_tui.contract import Estimate, Plan, Run, TrainingSpecEcho, model_params
from ito_tui.format import MISSING, count, duration_h, fixed, integer, percent, usd
from ito_tui.textsafe import safe

__all__ = ["DiffRow", "Section", "differing", "spec_diff"]

Section = Literal["spec", "plan", "estimate"]


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One field of both runs: its section, its name, each run's text, whether they differ."""

    section: Section
    field: str
    a: str
    b: str
    differs: bool


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True  # NaN is data: two NaN estimates say the same
    if isinstance(x, Decimal) and isinstance(y, Decimal) and x.is_nan() and y.is_nan():
        return True
    return bool(x == y)


def _tokens(spec: TrainingSpecEcho) -> int | None:
    if spec.target_tokens is not None:
        return spec.target_tokens
    try:
        return int(20 * model_params(spec.model_size))
    except (ValueError, IndexError, OverflowError):
        # A size the contract cannot read, or whose number no float holds ("1e999B",
        # "infB", "nanB" echoed by a backend): no default to compare.
        return None


def _tokens_text(spec: TrainingSpecEcho) -> str:
    """`160B (20 × params)` for the default, `300B` for an explicit count."""
    tokens = _tokens(spec)
    if spec.target_tokens is None:
        return MISSING if tokens is None else f"{count(tokens)} (20 × params)"
    return count(tokens)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, float):
        return fixed(value, 2)
    return safe(value)


Read = Callable[[Run], Any]
"""A field's value in a run (None: the run has none)."""


def _plan_of(run: Run) -> Plan | None:
    return run.plan or (run.estimate.plan if run.estimate is not None else None)


def _spec(get: Callable[[TrainingSpecEcho], Any]) -> Read:
    return lambda run: get(run.spec)


def _plan(get: Callable[[Plan], Any]) -> Read:
    return lambda run: None if (plan := _plan_of(run)) is None else get(plan)


def _estimate(get: Callable[[Estimate], Any]) -> Read:
    return lambda run: None if run.estimate is None else get(run.estimate)


def _stages(estimate: Estimate) -> tuple[str, ...]:
    return tuple(safe(s.stage) for s in estimate.stages)


def _grouped(value: float) -> str:
    return fixed(value, 0, grouping=True)


def _names(names: tuple[str, ...]) -> str:
    return " ".join(names) or MISSING


Field = tuple[str, Read, Callable[[Any], str]]
"""(name, its value in a run, its text from that value when it has one)."""

FIELDS: tuple[tuple[Section, tuple[Field, ...]], ...] = (
    (
        "spec",
        (
            ("booking", _spec(lambda s: s.booking_id), _text),
            ("model size", _spec(lambda s: s.model_size), _text),
            ("data ref", _spec(lambda s: s.data_ref), _text),
            ("data kind", _spec(lambda s: str(s.data_kind)), _text),
            ("target", _spec(lambda s: s.target_capability), _text),
            ("tokens", _spec(lambda s: s), _tokens_text),
            ("seq len", _spec(lambda s: s.seq_len), _text),
            ("post-training", _spec(lambda s: str(s.post_training or "none")), _text),
            ("budget", _spec(lambda s: s.budget_usd), usd),
        ),
    ),
    (
        "plan",
        (
            ("GPUs", _plan(lambda p: p.world_size), _text),
            ("dp replicate", _plan(lambda p: p.dp_replicate), _text),
            ("dp shard", _plan(lambda p: p.dp_shard), _text),
            ("tp", _plan(lambda p: p.tp), _text),
            ("pp", _plan(lambda p: p.pp), _text),
            ("cp", _plan(lambda p: p.cp), _text),
            ("precision", _plan(lambda p: str(p.precision)), _text),
            ("act. checkpoint", _plan(lambda p: str(p.activation_checkpoint)), _text),
            ("compile", _plan(lambda p: p.compile), _text),
            ("fault tolerance", _plan(lambda p: str(p.fault_tolerance)), _text),
            ("local batch seqs", _plan(lambda p: p.local_batch_seqs), _text),
            ("global batch tok", _plan(lambda p: p.global_batch_tokens), count),
            ("mem / GPU", _plan(lambda p: p.est_mem_per_gpu_gib), lambda v: f"{fixed(v, 1)} GiB"),
            ("tok/s/GPU", _plan(lambda p: p.est_tokens_per_s_per_gpu), _grouped),
            ("MFU", _plan(lambda p: p.est_mfu_frac), lambda v: percent(v, 1)),
        ),
    ),
    (
        "estimate",
        (
            ("cost p50", _estimate(lambda e: e.usd_p50), usd),
            ("cost p90", _estimate(lambda e: e.usd_p90), usd),
            ("wall time p50", _estimate(lambda e: e.wall_clock_h_p50), duration_h),
            ("wall time p90", _estimate(lambda e: e.wall_clock_h_p90), duration_h),
            ("GPU-hours", _estimate(lambda e: e.total_gpu_hours), _grouped),
            ("interruptions", _estimate(lambda e: e.expected_interruptions), _text),
            ("fits budget", _estimate(lambda e: e.fits_budget), _text),
            ("fits window", _estimate(lambda e: e.fits_booking_window), _text),
            ("stages", _estimate(_stages), _names),
        ),
    ),
)
"""Every compared field, in the screen's order (section by section)."""


def _compared(name: str, value: Any) -> Any:
    # The tokens a spec trains, a default included (its text says which it is).
    return _tokens(value) if name == "tokens" else value


def spec_diff(a: Run, b: Run) -> tuple[DiffRow, ...]:
    """Every field of `FIELDS` for runs `a` and `b`, each marked when the values differ."""
    rows: list[DiffRow] = []
    for section, fields in FIELDS:
        for name, read, text in fields:
            va, vb = read(a), read(b)
            rows.append(
                DiffRow(
                    section,
                    name,
                    MISSING if va is None else text(va),
                    MISSING if vb is None else text(vb),
                    not _same(_compared(name, va), _compared(name, vb)),
                )
            )
    return tuple(rows)


def differing(rows: tuple[DiffRow, ...]) -> tuple[str, ...]:
    """The names of the fields that differ (`section.field`), in order."""
    return tuple(f"{r.section}.{r.field}" for r in rows if r.differs)
