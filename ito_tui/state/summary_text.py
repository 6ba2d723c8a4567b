"""A finished run's summary (`state/summary.py: RunEnd`) in words and as JSON: the rows the
run screen's panel and `ito-tui status` print alike, and `status --json`'s `summary`.

Every number goes through `ito_tui.format`, every gate result through `describe`'s words,
every backend string is made safe (one line). Pure, no Textual.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ito_tui.describe import gate_gap_text, gate_miss_text, gate_result_text
from ito_tui.format import (
    MISSING,
    duration,
    duration_h,
    fixed,
    general,
    integer,
    stage_label,
    status_label,
    usd,
    usd_compact,
)
from ito_tui.textsafe import one_line, visible

if TYPE_CHECKING:
    from ito_tui.contract import Gate, GateResult

    from .summary import Rollback, RunEnd, StageEnd

from .summary import TRAINING_STAGES

__all__ = [
    "OUTCOME_WORDS",
    "against",
    "estimate_rows",
    "fact_rows",
    "outcome_brief",
    "outcome_text",
    "stage_line",
    "summary_json",
    "summary_rows",
]


def against(value: float | Decimal | None, p50: object, p90: object) -> str | None:
    """Where `value` fell against an estimate's p50/p90: `under p50`, `p50–p90`,
    `over p90`; None when any of the three is unknown (or not a finite number)."""
    if value is None or p50 is None or p90 is None:
        return None
    try:
        v, lo, hi = float(value), float(p50), float(p90)  # type: ignore[arg-type]  # Decimal|float
    except (TypeError, ValueError):
        return None
    if not all(math.isfinite(x) for x in (v, lo, hi)):
        return None
    if v <= lo:
        return "under p50"
    return "p50–p90" if v <= hi else "over p90"


def _vs(text: str, p50: str, p90: str, verdict: str | None) -> str:
    if p50 == MISSING and p90 == MISSING:
        return f"{text} (no estimate)"
    return f"{text} · est. p50 {p50}, p90 {p90}" + (f" · {verdict}" if verdict else "")


OUTCOME_WORDS = {
    "completed": "completed",
    "gate_failed": "stopped by a failed gate",
    "failed": "failed",
    "cancelled": "cancelled",
}


def _gate_text(gate: Gate) -> str:
    status = str(gate.status)
    failing = gate.failing
    if status == "failed" or failing:
        misses = "; ".join(gate_miss_text(r) for r in failing) or "no benchmark reported"
        return f"gate FAILED: {misses}"
    if status == "passed":
        return f"gate passed ({len(gate.results)} benchmarks)"
    return f"gate {status_label(status)}"


def _loss(s: StageEnd) -> str | None:
    """`loss 2.314` (`loss —` unknown) for a stage that trains; None for one that does not."""
    if s.name not in TRAINING_STAGES and s.final_loss is None:
        return None
    return f"loss {MISSING if s.final_loss is None else general(s.final_loss, 4)}"


def stage_line(s: StageEnd) -> str:
    """`passed · loss 2.314 · 1,200 steps · gate passed (2 benchmarks)`."""
    parts = [status_label(s.status)]
    if (loss := _loss(s)) is not None:
        parts.append(loss)
    if s.steps is not None:
        parts.append(f"{integer(s.steps)} steps")
    if s.gate is not None:
        parts.append(_gate_text(s.gate))
    return " · ".join(parts)


def _rollback_text(rollbacks: tuple[Rollback, ...] | None) -> str:
    if rollbacks is None:
        return MISSING
    if not rollbacks:
        return "none"
    parts = []
    for r in rollbacks:
        to = f"to step {integer(r.to_step)}" if r.to_step is not None else "rolled back"
        lost = f", {integer(r.lost_steps)} steps lost" if r.lost_steps is not None else ""
        parts.append(to + lost)
    return f"{len(rollbacks)}: " + "; ".join(parts)


def outcome_text(end: RunEnd) -> str:
    """`completed`, `stopped by a failed gate: the mid-train gate`, `cancelled: <detail>`."""
    outcome = OUTCOME_WORDS[end.outcome]
    if end.failed_gate is not None:
        return f"{outcome}: the {stage_label(end.failed_gate.stage)} gate"
    if end.detail and end.outcome != "completed":
        return f"{outcome}: {one_line(end.detail)}"
    return outcome


def outcome_brief(end: RunEnd) -> str:
    """`completed`, `gate failed: mid-train`, `cancelled: <detail>`: a panel's heading."""
    if end.failed_gate is not None:
        return f"gate failed: {stage_label(end.failed_gate.stage)}"
    word = end.outcome.replace("_", " ")
    if end.detail and end.outcome != "completed":
        return f"{word}: {one_line(end.detail, 60)}"
    return word


def summary_rows(end: RunEnd) -> list[tuple[str, str]]:
    """(label, text) rows of the summary, the same on the run screen and in `status`;
    every backend string made safe (one line), every number through `ito_tui.format`."""
    outcome = outcome_text(end)
    wall = duration(end.wall_s)
    hours = None if end.wall_s is None else end.wall_s / 3600
    wall_vs = against(hours, end.wall_h_p50, end.wall_h_p90)
    cost_vs = against(end.usd_spent, end.usd_p50, end.usd_p90)
    gpu_h = MISSING if end.gpu_hours is None else fixed(end.gpu_hours, 0, grouping=True)
    gpu_est = MISSING if end.gpu_hours_est is None else fixed(end.gpu_hours_est, 0, grouping=True)
    cost = usd(end.usd_spent)
    if end.budget_usd is not None:
        cost += f" of {usd(end.budget_usd)} budget"
    lost = end.interruption_lost_steps
    interruptions = integer(end.interruptions)
    if end.interruptions:
        interruptions += f" · {MISSING if lost is None else integer(lost)} steps lost"
    rows = [
        ("outcome", outcome),
        ("wall time", _vs(wall, duration_h(end.wall_h_p50), duration_h(end.wall_h_p90), wall_vs)),
        ("GPU-hours", f"{gpu_h} · est. {gpu_est}"),
        ("cost", _vs(cost, usd(end.usd_p50), usd(end.usd_p90), cost_vs)),
        ("interruptions", interruptions),
        ("rollbacks", _rollback_text(end.rollbacks)),
    ]
    rows += [(stage_label(s.name), stage_line(s)) for s in end.stages]
    return rows


def _span(p50: str, p90: str) -> str:
    """`1h12m–1h36m`; `—` when neither is known (no estimate)."""
    return MISSING if p50 == p90 == MISSING else f"{p50}–{p90}"


def estimate_rows(end: RunEnd) -> list[tuple[str, str, str, str]]:
    """(label, actual, estimate p50–p90, verdict) rows for a narrow panel (`$17.5K`): the
    run screen's actual-against-estimate table (the budget is in the run strip)."""
    hours = None if end.wall_s is None else end.wall_s / 3600
    gpu_h = MISSING if end.gpu_hours is None else fixed(end.gpu_hours, 0, grouping=True)
    gpu_est = MISSING if end.gpu_hours_est is None else fixed(end.gpu_hours_est, 0, grouping=True)
    return [
        (
            "wall time",
            duration(end.wall_s),
            _span(duration_h(end.wall_h_p50), duration_h(end.wall_h_p90)),
            against(hours, end.wall_h_p50, end.wall_h_p90) or "",
        ),
        ("GPU-hours", gpu_h, gpu_est, ""),
        (
            "cost",
            usd_compact(end.usd_spent),
            _span(usd_compact(end.usd_p50), usd_compact(end.usd_p90)),
            against(end.usd_spent, end.usd_p50, end.usd_p90) or "",
        ),
    ]


def fact_rows(end: RunEnd) -> list[tuple[str, str]]:
    """The panel's rows under its table: interruptions, rollbacks, then each stage briefly
    (`loss 2.31 · gate✓`; a failed gate's benchmarks and by how much they missed)."""
    lost = end.interruption_lost_steps
    interruptions = integer(end.interruptions)
    if end.interruptions:
        interruptions += f" · {MISSING if lost is None else integer(lost)} steps lost"
    rows = [("interrupts", interruptions), ("rollbacks", _rollback_text(end.rollbacks))]
    for s in end.stages:
        if s.name not in TRAINING_STAGES and s.gate is None and s.status == "passed":
            continue  # data prep, the plan: nothing to say but `passed` (the list says it)
        parts = [] if s.status == "passed" else [status_label(s.status)]
        if (loss := _loss(s)) is not None:
            parts.append(loss)
        if s.gate is not None:
            failing = s.gate.failing
            if failing:
                misses = ", ".join(f"{visible(r.benchmark)} {gate_gap_text(r)}" for r in failing)
                parts.append(f"gate✗ {misses}")
            elif str(s.gate.status) == "passed":
                parts.append("gate✓")
        rows.append((stage_label(s.name), " · ".join(parts) or status_label(s.status)))
    return rows


# ---------------------------------------------------------------- as JSON


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _result_json(r: GateResult) -> dict[str, Any]:
    return {
        "benchmark": r.benchmark,
        "metric": r.metric,
        "value": r.value,
        "threshold": r.threshold,
        "comparator": str(r.comparator),
        "passed": r.passed,
        "gap": abs(r.value - r.threshold),
        "text": gate_result_text(r, verdict=True),
    }


def summary_json(end: RunEnd) -> dict[str, Any]:
    """The summary as JSON data (`status --json`'s `summary`): money as decimal strings
    (the API's `_usd` form), hours and steps as numbers, unknown facts as null; a
    non-finite loss stays a float for `output.to_jsonable` to write as `"NaN"`."""
    return {
        "outcome": end.outcome,
        "detail": end.detail,
        "failed_gate_id": end.failed_gate.gate_id if end.failed_gate is not None else None,
        "wall_clock_h": None if end.wall_s is None else end.wall_s / 3600,
        "wall_clock_h_p50": end.wall_h_p50,
        "wall_clock_h_p90": end.wall_h_p90,
        "gpu_hours": end.gpu_hours,
        "total_gpu_hours_est": end.gpu_hours_est,
        "usd_spent": _money(end.usd_spent),
        "usd_p50": _money(end.usd_p50),
        "usd_p90": _money(end.usd_p90),
        "budget_usd": _money(end.budget_usd),
        "interruptions": end.interruptions,
        "interruption_lost_steps": end.interruption_lost_steps,
        "rollbacks": None
        if end.rollbacks is None
        else [
            {
                "proposal_id": r.proposal_id,
                "from_step": r.from_step,
                "to_step": r.to_step,
                "lost_steps": r.lost_steps,
            }
            for r in end.rollbacks
        ],
        "stages": [
            {
                "stage": s.name,
                "status": s.status,
                "final_loss": s.final_loss,
                "steps": s.steps,
                "gate": None
                if s.gate is None
                else {
                    "gate_id": s.gate.gate_id,
                    "status": str(s.gate.status),
                    "results": [_result_json(r) for r in s.gate.results],
                },
            }
            for s in end.stages
        ],
    }
