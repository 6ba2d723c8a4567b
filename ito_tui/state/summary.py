"""A run's summary once it has ended: how each stage ended, its gates, the wall time,
GPU-hours and cost against the estimate's p50/p90, interruptions and rollbacks.

Where each fact comes from (a fact the backend did not send is `None`, shown `—`; nothing
is made up):

- the outcome, the failure's detail, the stages and their gates, the spend (GPU-hours,
  dollars, budget), the estimate and the faults: the `Run` snapshot and the events
  replayed into `RunState` (the two carry the same fields);
- a stage's final loss: the stage's `summary.final_loss` (sent with `stage.completed` and
  in the snapshot's stages), else, for the stage the run ended in, the loss of the run's
  newest telemetry sample of that stage (`last_sample`): a stage stopped by its gate or a
  cancel never completed, so it has no summary;
- the wall time: from the first stage's start to the last stage's end, on the backend's
  clock (the estimate's hours are on the same clock; a demo's simulated hours);
- interruptions: the run's faults; their lost steps: each recovered fault's `lost_steps`
  (unknown if a recovered fault does not say);
- rollbacks: the run's rollback proposals that were approved (`proposals`, fetched from
  `GET /runs/{id}/proposals`, with the ones the events carried); unknown (`None`) when no
  list was had, since the events alone miss those of a run opened after they happened.

`run_end` is pure; `state/summary_text.py` writes it in words for the run screen's panel
and `ito-tui status` alike (`summary_rows`), and as JSON for `status --json`. No Textual.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ito_tui.contract import Gate, Proposal, TelemetrySample

from .run import Outcome, RunState
from .views import stage_views

__all__ = ["TRAINING_STAGES", "Rollback", "RunEnd", "StageEnd", "run_end"]

_RAN = frozenset({"passed", "failed", "cancelled", "gate_eval", "running", "paused", "recovering"})
"""Stage statuses of a stage that ran (a skipped or never-started stage has no summary)."""
_APPROVED = frozenset({"approved", "executed"})
TRAINING_STAGES = frozenset({"pretrain", "mid_train", "long_context", "sft", "dpo", "rlvr"})
"""The stages that train, so have a loss (data prep, the ladder and the plan do not)."""
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


@dataclass(frozen=True, slots=True)
class StageEnd:
    """How one stage that ran ended."""

    name: str
    status: str
    final_loss: float | None
    steps: int | None
    gate: Gate | None


@dataclass(frozen=True, slots=True)
class Rollback:
    """An approved rollback: back to `to_step` from `from_step`, `lost_steps` lost."""

    proposal_id: str
    from_step: int | None
    to_step: int | None
    lost_steps: int | None


@dataclass(frozen=True, slots=True)
class RunEnd:
    """A finished run's summary beside its estimate (`None` fields: not sent)."""

    run_id: str
    outcome: Outcome
    detail: str
    """The failure's (or the end event's) detail: the backend's words, render literally."""
    failed_gate: Gate | None
    stages: tuple[StageEnd, ...]
    wall_s: float | None
    wall_h_p50: float | None
    wall_h_p90: float | None
    gpu_hours: float | None
    gpu_hours_est: float | None
    usd_spent: Decimal | None
    usd_p50: Decimal | None
    usd_p90: Decimal | None
    budget_usd: Decimal | None
    interruptions: int
    interruption_lost_steps: int | None
    rollbacks: tuple[Rollback, ...] | None
    """`None`: the run's proposals were not had, so its rollbacks are not known."""

    @property
    def gates(self) -> tuple[Gate, ...]:
        """The gates of the stages that ran, in pipeline order."""
        return tuple(s.gate for s in self.stages if s.gate is not None)


def _number(value: object) -> float | None:
    """A loss from a free-form summary: a number, or the wire's `"NaN"`/`"Infinity"`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return _NONFINITE.get(value)
    return None


def _final_loss(
    name: str, summary: Mapping[str, Any], sample: TelemetrySample | None
) -> float | None:
    given = _number(summary.get("final_loss"))
    if given is not None or "final_loss" in summary:
        return given
    if sample is not None and str(sample.stage) == name:
        return sample.loss
    return None


def _steps(summary: Mapping[str, Any], view_step: int | None) -> int | None:
    steps = summary.get("steps")
    if isinstance(steps, int) and not isinstance(steps, bool):
        return steps
    return view_step


def _wall_s(state: RunState) -> float | None:
    starts = [s.started_at for s in state.stages if s.started_at is not None]
    ends = [s.ended_at for s in state.stages if s.ended_at is not None]
    if not starts or not ends:
        return None
    return max(0.0, (max(ends) - min(starts)).total_seconds())


def _rollbacks(
    state: RunState, proposals: Iterable[Proposal] | None
) -> tuple[Rollback, ...] | None:
    if proposals is None:
        return None
    # The fetched list is complete; an event seen since may be newer than its copy.
    by_id = {p.proposal_id: p for p in proposals}
    by_id.update(state.proposals)
    found = [
        p
        for p in by_id.values()
        if str(p.kind) == "rollback_and_skip" and str(p.status) in _APPROVED
    ]
    found.sort(key=lambda p: p.created_at)
    return tuple(
        Rollback(p.proposal_id, p.trigger.step, p.action.rollback_to_step, p.impact.lost_steps)
        for p in found
    )


def run_end(
    state: RunState,
    *,
    proposals: Iterable[Proposal] | None = None,
    last_sample: TelemetrySample | None = None,
) -> RunEnd | None:
    """The summary of `state`'s run once it has ended (None while it runs).

    `proposals`: the run's proposals as `GET /runs/{id}/proposals` lists them (None when
    not fetched: rollbacks unknown); `last_sample`: the run's newest telemetry sample
    (default: the newest the events carried).
    """
    outcome = state.outcome
    if outcome is None:
        return None
    sample = last_sample if last_sample is not None else state.telemetry
    if state.telemetry is not None and sample is not None and state.telemetry.seq > sample.seq:
        sample = state.telemetry
    stages = tuple(
        StageEnd(
            name=v.name,
            status=v.status,
            final_loss=_final_loss(v.name, v.stage.summary if v.stage else {}, sample),
            steps=_steps(v.stage.summary if v.stage else {}, v.step),
            gate=v.gate,
        )
        for v in stage_views(state)
        if v.status in _RAN or v.gate is not None
    )
    failed = next((s.gate for s in stages if s.gate and str(s.gate.status) == "failed"), None)
    est, spend = state.estimate, state.spend
    faults = state.faults
    unknown_loss = any(f.recovered and f.lost_steps is None for f in faults)
    budget = spend.budget_usd if spend is not None else None
    if budget is None and state.spec is not None:
        budget = state.spec.budget_usd
    detail = state.failure.detail if state.failure is not None else ""
    return RunEnd(
        run_id=state.run_id,
        outcome=outcome,
        detail=detail or state.detail,
        failed_gate=failed,
        stages=stages,
        wall_s=_wall_s(state),
        wall_h_p50=est.wall_clock_h_p50 if est is not None else None,
        wall_h_p90=est.wall_clock_h_p90 if est is not None else None,
        gpu_hours=spend.gpu_hours if spend is not None else None,
        gpu_hours_est=est.total_gpu_hours if est is not None else None,
        usd_spent=state.usd_spent,
        usd_p50=est.usd_p50 if est is not None else None,
        usd_p90=est.usd_p90 if est is not None else None,
        budget_usd=budget,
        interruptions=len(faults),
        interruption_lost_steps=None
        if unknown_loss
        else sum(f.lost_steps or 0 for f in faults if f.recovered),
        rollbacks=_rollbacks(state, proposals),
    )
