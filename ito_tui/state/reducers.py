"""One pure handler per event type: `(RunState, event) -> RunState` (`HANDLERS` by type).

Handlers never mutate their input: they build the few changed fields and call
`state.evolve`, which shares everything else. The caller (`RunState.apply`)
has already dropped events at or below `last_seq`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ito_tui.contract import (
    STAGE_ORDER,
    Gate,
    Spend,
    Stage,
    StageProgress,
)

from .fleet_events import node_changed, quorum_changed, straggler_changed
from .incidents import (
    checkpoint_failed,
    checkpoint_saved,
    fault_detected,
    fault_recovered,
    loss_spike,
    proposal_changed,
    slo_breached,
)
from .records import Rewind, bounded, with_item

if TYPE_CHECKING:
    from .run import RunState

__all__ = ["HANDLERS"]

Handler = Callable[["RunState", Any], "RunState"]

_STAGE_INDEX = {name.value: i for i, name in enumerate(STAGE_ORDER)}
_TERMINAL_STATE = {
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
}
_OPEN_STAGE_STATES = frozenset({"pending", "running", "gate_eval"})


# ---------------------------------------------------------------- helpers


def _stage_index(stages: tuple[Stage, ...], name: str) -> int | None:
    i = _STAGE_INDEX.get(name)
    if i is not None and i < len(stages) and str(stages[i].name) == name:
        return i
    for j, s in enumerate(stages):
        if str(s.name) == name:
            return j
    return None


def _update_stage(stages: tuple[Stage, ...], name: str, **update: Any) -> tuple[Stage, ...]:
    """`stages` with stage `name` updated (an unknown name is appended)."""
    i = _stage_index(stages, name)
    if i is None:
        return (*stages, Stage(name=name).model_copy(update=update))
    return (*stages[:i], stages[i].model_copy(update=update), *stages[i + 1 :])


def _stage_state(stages: tuple[Stage, ...], name: str) -> str | None:
    i = _stage_index(stages, name)
    return None if i is None else str(stages[i].state)


# ---------------------------------------------------------------- run


def _run_accepted(s: RunState, ev: Any) -> RunState:
    d = ev.data
    return s.evolve(
        last_seq=ev.seq,
        booking_id=d.booking_id,
        state=str(d.state),
        plan=d.plan if d.plan is not None else s.plan,
    )


def _run_state_changed(s: RunState, ev: Any) -> RunState:
    return s.evolve(last_seq=ev.seq, state=str(ev.data.to_state))


def _run_ended(s: RunState, ev: Any) -> RunState:
    d = ev.data
    final = _TERMINAL_STATE[ev.type]
    stages = s.stages
    if final != "completed":
        # Stages still open when a run fails or is cancelled end with it.
        closed = "cancelled" if final == "cancelled" else "failed"
        stages = tuple(
            st.model_copy(update={"state": closed, "ended_at": st.ended_at or ev.at})
            if str(st.state) in ("running", "gate_eval")
            else st
            for st in stages
        )
    changes: dict[str, Any] = {
        "last_seq": ev.seq,
        "state": final,
        "terminal": True,
        "failure": d.failure if d.failure is not None else s.failure,
        "detail": d.detail,
        "stages": stages,
        "pending_proposals": (),
    }
    if d.spend is not None:
        changes["spend"] = d.spend
        changes["spend_seq"] = ev.seq
    return s.evolve(**changes)


def _resync(s: RunState, ev: Any) -> RunState:
    return s.reseed(ev.data, seq=ev.seq).evolve(resynced=s.resynced + 1)


# ---------------------------------------------------------------- stages


def _stage_started(s: RunState, ev: Any) -> RunState:
    d = ev.data
    name = str(d.stage)
    # A stage that trains says how far it will go; one that does not (data prep, the plan)
    # has no progress, not `step 0` (its detail read `step 0 · 0/— tok`).
    progress = (
        StageProgress(total_steps=d.total_steps or 0, total_tokens=d.total_tokens or 0)
        if d.total_steps or d.total_tokens
        else None
    )
    # Stage times are on the run's clock (`ev.at`), as a snapshot's are.
    stages = _update_stage(
        s.stages, name, state="running", started_at=ev.at, ended_at=None, progress=progress
    )
    return s.evolve(last_seq=ev.seq, stages=stages, current_stage=name)


def _stage_progress(s: RunState, ev: Any) -> RunState:
    # The hot path after telemetry: one index lookup, one model copy, one new tuple.
    d = ev.data
    name = str(d.stage)
    stages = s.stages
    i = _stage_index(stages, name)
    if i is None:
        stages = _update_stage(stages, name, state="running", progress=d.progress)
    else:
        old = stages[i]
        update: dict[str, Any] = {"progress": d.progress}
        if old.state == "pending":
            update["state"] = "running"
        stages = (*stages[:i], old.model_copy(update=update), *stages[i + 1 :])
    if s.current_stage is None:
        return s.evolve(last_seq=ev.seq, stages=stages, current_stage=name)
    return s.evolve(last_seq=ev.seq, stages=stages)


def _stage_completed(s: RunState, ev: Any) -> RunState:
    d = ev.data
    name = str(d.stage)
    i = _stage_index(s.stages, name)
    old = s.stages[i] if i is not None else Stage(name=name)
    # A gate verdict already given (failed, or a gate still evaluating) stands.
    state = str(old.state) if str(old.state) in ("failed", "gate_eval") else "passed"
    stages = _update_stage(
        s.stages, name, state=state, ended_at=ev.at, summary={**old.summary, **d.summary}
    )
    return s.evolve(last_seq=ev.seq, stages=stages)


def _stage_closed(state: str) -> Handler:
    """A handler for a stage that ends without passing: skipped (never ran, so no end
    time) or failed. The reason goes into the stage summary."""

    def handler(s: RunState, ev: Any) -> RunState:
        d = ev.data
        name = str(d.stage)
        i = _stage_index(s.stages, name)
        summary = dict(s.stages[i].summary) if i is not None else {}
        if d.reason:
            summary["reason"] = d.reason
        update: dict[str, Any] = {"state": state, "summary": summary}
        if state != "skipped":
            update["ended_at"] = ev.at
        stages = _update_stage(s.stages, name, **update)
        return s.evolve(last_seq=ev.seq, stages=stages)

    return handler


def _field(name: str) -> Handler:
    """A handler storing the payload in field `name` (data summaries, ladder, plan)."""

    def handler(s: RunState, ev: Any) -> RunState:
        return s.evolve(last_seq=ev.seq, **{name: ev.data})

    return handler


def _plan_selected(s: RunState, ev: Any) -> RunState:
    return s.evolve(last_seq=ev.seq, plan=ev.data.plan)


def _plan_warning(s: RunState, ev: Any) -> RunState:
    return s.evolve(last_seq=ev.seq, plan_warnings=bounded(s.plan_warnings, ev.data))


# ---------------------------------------------------------------- gates


def _gate_set(s: RunState, ev: Any, gate: Gate, state: str | None) -> RunState:
    name = str(gate.stage)
    update: dict[str, Any] = {"gate": gate}
    if state is not None:
        update["state"] = state
        if state in ("passed", "failed"):
            update["ended_at"] = ev.at
    return s.evolve(
        last_seq=ev.seq,
        gates=with_item(s.gates, name, gate),
        stages=_update_stage(s.stages, name, **update),
    )


def _gate_started(s: RunState, ev: Any) -> RunState:
    gate: Gate = ev.data.gate
    current = _stage_state(s.stages, str(gate.stage))
    return _gate_set(s, ev, gate, "gate_eval" if current != "failed" else None)


def _gate_result(s: RunState, ev: Any) -> RunState:
    d = ev.data
    for name, gate in s.gates.items():
        if gate.gate_id == d.gate_id:
            r = d.result
            kept = [x for x in gate.results if (x.benchmark, x.metric) != (r.benchmark, r.metric)]
            new_gate = gate.model_copy(update={"results": [*kept, r]})
            stages = _update_stage(s.stages, name, gate=new_gate)
            return s.evolve(
                last_seq=ev.seq, gates=with_item(s.gates, name, new_gate), stages=stages
            )
    return s.evolve(last_seq=ev.seq)


def _gate_decided(verdict: str) -> Handler:
    def handler(s: RunState, ev: Any) -> RunState:
        gate: Gate = ev.data.gate
        if str(gate.status) != verdict:
            gate = gate.model_copy(update={"status": verdict})
        return _gate_set(s, ev, gate, verdict)

    return handler


# ---------------------------------------------------------------- telemetry & budget


def _telemetry(s: RunState, ev: Any) -> RunState:
    sample = ev.data
    prev = s.telemetry
    if (
        prev is not None
        and sample.step < prev.step
        and sample.stage == prev.stage
        and not (s.rewinds and s.rewinds[-1].seq > s.telemetry_seq)
    ):
        # The step went back with no rewind recorded since the last sample: record one.
        rewind = Rewind(prev.step, sample.step, ev.seq)
        return s.evolve(
            last_seq=ev.seq,
            telemetry=sample,
            telemetry_seq=ev.seq,
            rewinds=bounded(s.rewinds, rewind),
        )
    return s.evolve(last_seq=ev.seq, telemetry=sample, telemetry_seq=ev.seq)


def _budget_warning(s: RunState, ev: Any) -> RunState:
    d = ev.data
    if s.spend is None:
        spend = Spend(usd_spent=d.usd_spent, usd_committed=d.usd_spent, budget_usd=d.budget_usd)
    else:
        spend = s.spend.model_copy(update={"usd_spent": d.usd_spent, "budget_usd": d.budget_usd})
    return s.evolve(
        last_seq=ev.seq,
        spend=spend,
        spend_seq=ev.seq,
        budget_warnings=bounded(s.budget_warnings, d),
    )


HANDLERS: dict[str, Handler] = {
    "run.accepted": _run_accepted,
    "run.state_changed": _run_state_changed,
    "stage.started": _stage_started,
    "stage.progress": _stage_progress,
    "stage.completed": _stage_completed,
    "stage.skipped": _stage_closed("skipped"),
    "stage.failed": _stage_closed("failed"),
    "data.manifest_ready": _field("manifest"),
    "data.dedup_completed": _field("dedup"),
    "data.decontam_completed": _field("decontam"),
    "ladder.completed": _field("ladder"),
    "plan.selected": _plan_selected,
    "plan.warning": _plan_warning,
    "checkpoint.saved": checkpoint_saved,
    "checkpoint.failed": checkpoint_failed,
    "fault.detected": fault_detected,
    "fault.recovered": fault_recovered,
    "slo.breached": slo_breached,
    "loss.spike_detected": loss_spike,
    "proposal.created": proposal_changed,
    "proposal.approved": proposal_changed,
    "proposal.rejected": proposal_changed,
    "proposal.expired": proposal_changed,
    "proposal.executed": proposal_changed,
    "gate.started": _gate_started,
    "gate.result": _gate_result,
    "gate.passed": _gate_decided("passed"),
    "gate.failed": _gate_decided("failed"),
    "telemetry": _telemetry,
    "budget.warning": _budget_warning,
    "run.completed": _run_ended,
    "run.failed": _run_ended,
    "run.cancelled": _run_ended,
    "resync": _resync,
    "node.degraded": node_changed,
    "node.failed": node_changed,
    "node.replaced": node_changed,
    "node.recovered": node_changed,
    "straggler.detected": straggler_changed,
    "straggler.cleared": straggler_changed,
    "quorum.changed": quorum_changed,
}
