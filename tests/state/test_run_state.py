"""RunState: every event type's effect, idempotency by seq, resync, immutability, outcome."""

from __future__ import annotations

import copy
import dataclasses
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from ito_tui.contract import EVENT_PAYLOADS, STAGE_ORDER, EventBase, Run, make_event
from ito_tui.state import MAX_HISTORY, Rewind, RunState
from ito_tui.state.fleet_events import MAX_NODES
from ito_tui.state.reducers import HANDLERS
from ito_tui.state.views import progress

from .sequence import (
    FAILING,
    RUN_ID,
    SPARE,
    T0,
    node_failure_chain,
    proposal,
    run_snapshot,
    showcase,
    spend,
    telemetry_data,
)


def ev(type_: str, seq: int, data: dict[str, Any]) -> EventBase:
    return make_event(type_, seq=seq, run_id=RUN_ID, ts=T0 + timedelta(seconds=seq), data=data)


def fold(events: list[EventBase], state: RunState | None = None) -> RunState:
    state = state or RunState.empty(RUN_ID)
    for e in events:
        state = state.apply(e)
    return state


@pytest.fixture(scope="module")
def final() -> RunState:
    return fold(showcase())


def test_every_contract_event_type_has_a_handler() -> None:
    assert set(HANDLERS) == set(EVENT_PAYLOADS)


def test_empty_state_has_all_nine_stages_in_order() -> None:
    s = RunState.empty(RUN_ID)
    assert [str(st.name) for st in s.stages] == [n.value for n in STAGE_ORDER]
    assert all(str(st.state) == "pending" for st in s.stages)
    assert s.last_seq == 0 and s.outcome is None


def test_stages_gates_and_data_summaries(final: RunState) -> None:
    states = {str(st.name): str(st.state) for st in final.stages}
    assert states["data_prep"] == "passed"
    assert states["ladder"] == "skipped"
    assert states["plan"] == "passed"
    assert states["pretrain"] == "passed"
    assert states["mid_train"] == "failed"  # the gate verdict
    assert states["sft"] == "pending"
    assert final.stage("ladder") is not None
    assert final.stage("ladder").summary["reason"] == "curated data"  # type: ignore[union-attr]
    assert final.gates["pretrain"].status == "passed"
    assert [r.benchmark for r in final.gates["pretrain"].results] == ["bench0"]
    assert final.gates["mid_train"].status == "failed"
    assert final.stage("mid_train").gate == final.gates["mid_train"]  # type: ignore[union-attr]
    assert final.manifest is not None and final.manifest.documents == 1000
    assert final.dedup is not None and final.dedup.documents_after == 900
    assert final.decontam is not None and final.decontam.per_benchmark == {"mmlu": 3}
    assert final.plan is not None and final.plan.world_size == 64
    assert [w.code for w in final.plan_warnings] == ["plan.tight_memory"]
    assert final.current_stage == "mid_train"


def test_checkpoints_faults_spikes_and_budget(final: RunState) -> None:
    assert [c.checkpoint_id for c in final.checkpoints] == ["ckpt_2"]
    assert [(f.step, f.reason) for f in final.checkpoint_failures] == [(210, "storage timeout")]
    (fault,) = final.faults
    assert fault.recovered and fault.resumed_after_s == 960.0 and fault.lost_steps == 40
    assert fault.slo_breached == ["resume"]
    assert [b.slo for b in final.slo_breaches] == ["resume"]
    assert [(s.step, s.action) for s in final.loss_spikes] == [(250, "skipped"), (260, "escalated")]
    assert [w.threshold_frac for w in final.budget_warnings] == [0.5]


def test_proposals_and_rollback_rewind(final: RunState) -> None:
    assert final.proposals["prop_1"].status == "executed"
    assert final.proposals["prop_2"].status == "expired"
    assert final.pending_proposals == ()
    # One rewind for the approved+executed rollback; the telemetry that then went
    # back to step 200 does not record a second one.
    assert final.rewinds == (Rewind(from_step=300, to_step=200, seq=54),)


def test_terminal_failure_and_spend(final: RunState) -> None:
    assert final.terminal and final.state == "failed"
    assert final.failure is not None and final.failure.kind == "gate_failed"
    assert final.outcome == "gate_failed"
    assert final.detail == "mid_train gate failed"
    assert final.usd_spent == Decimal("16000.00")


def test_pending_proposal_is_listed_until_decided() -> None:
    s = fold([ev("proposal.created", 1, proposal("pending"))])
    assert s.pending_proposals == ("prop_1",)
    assert [p.proposal_id for p in s.pending] == ["prop_1"]
    s = s.apply(ev("proposal.rejected", 2, proposal("rejected")))
    assert s.pending_proposals == () and s.proposals["prop_1"].status == "rejected"
    assert s.rewinds == ()  # a rejected rollback rewinds nothing


def test_event_type_wins_over_a_stale_status_in_the_body() -> None:
    s = fold(
        [
            ev("proposal.created", 1, proposal("pending")),
            ev("proposal.approved", 2, proposal("pending")),
        ]
    )
    assert s.proposals["prop_1"].status == "approved"
    assert s.pending_proposals == ()


def test_telemetry_step_going_back_records_a_rewind_once() -> None:
    s = fold([ev("telemetry", i, telemetry_data(i, 100 * i)) for i in range(1, 6)])
    s = s.apply(ev("telemetry", 6, telemetry_data(6, 250)))
    assert s.rewinds == (Rewind(500, 250, 6),)
    s = s.apply(ev("telemetry", 7, telemetry_data(7, 260)))
    assert len(s.rewinds) == 1
    assert s.telemetry is not None and s.telemetry.step == 260


def test_unknown_event_changes_only_last_seq() -> None:
    s = fold(showcase()[:20])
    after = s.apply(ev("brand.new", 21, {"x": 1}))
    assert after.last_seq == 21
    assert dataclasses.replace(after, last_seq=s.last_seq) == s


def test_apply_is_idempotent_by_seq() -> None:
    events = showcase()
    s = fold(events)
    for e in events:
        assert s.apply(e) is s


def test_apply_never_mutates_its_input() -> None:
    events = showcase()
    states = [RunState.empty(RUN_ID)]
    for e in events:
        states.append(states[-1].apply(e))
    # Had any apply mutated an earlier state, it would differ from a fresh fold.
    for i in range(0, len(events) + 1, 7):
        assert states[i] == fold(events[:i])
    with pytest.raises(dataclasses.FrozenInstanceError):
        states[-1].state = "running"  # type: ignore[misc]
    assert copy.deepcopy(states[-1]) is states[-1]


def test_from_run_and_resync_keep_markers_and_take_the_snapshot() -> None:
    events = showcase()[:60]  # through the rollback and the budget warning
    s = fold(events)
    assert s.rewinds
    snap = run_snapshot(
        "running",
        last_seq=100,
        pending_proposal_ids=["prop_9"],
        faults=[{"fault_id": "f2", "kind": "nic_flap"}],
    )
    resynced = s.apply(ev("resync", 101, snap))
    assert resynced.last_seq == 101 and resynced.resynced == 1
    assert resynced.rewinds == s.rewinds  # markers survive
    assert resynced.checkpoints == s.checkpoints
    assert resynced.pending_proposals == ("prop_9",)
    assert [f.fault_id for f in resynced.faults] == ["f2"]
    assert resynced.spec is not None and resynced.spec.model_size == "8B"
    # A late replay of an old event after the resync changes nothing.
    assert resynced.apply(events[10]) is resynced

    fresh = RunState.from_run(Run.model_validate(snap))
    assert fresh.last_seq == 100 and fresh.state == "running"
    assert len(fresh.stages) == len(STAGE_ORDER)


@pytest.mark.parametrize(
    ("type_", "failure", "outcome"),
    [
        ("run.completed", None, "completed"),
        ("run.failed", {"kind": "budget_exhausted"}, "failed"),
        ("run.failed", {"kind": "gate_failed", "gate_id": "gate_x"}, "gate_failed"),
        ("run.failed", None, "failed"),
        ("run.cancelled", {"kind": "cancelled"}, "cancelled"),
    ],
)
def test_outcome(type_: str, failure: dict[str, Any] | None, outcome: str) -> None:
    s = fold([ev("stage.started", 1, {"stage": "pretrain"})])
    assert s.outcome is None
    s = s.apply(ev(type_, 2, {"failure": failure, "spend": spend("5.00"), "detail": "d"}))
    assert s.terminal and s.outcome == outcome
    pretrain = str(s.stages[3].state)
    assert pretrain == {"completed": "running", "cancelled": "cancelled"}.get(outcome, "failed")


def test_a_stage_that_does_not_train_has_no_progress_and_one_that_does_starts_at_zero() -> None:
    """The plan says no steps: between its end and pretrain's start the current stage is
    the plan, whose detail read `step 0 · 0/— tok` from a progress made of nothing."""
    s = fold(
        [ev("stage.started", 1, {"stage": "plan"}), ev("stage.completed", 2, {"stage": "plan"})]
    )
    assert s.current_stage == "plan" and s.stage("plan").progress is None
    assert progress(s).step is None
    s = s.apply(ev("stage.started", 3, {"stage": "pretrain", "total_steps": 1200}))
    assert progress(s).step == 0 and progress(s).total_steps == 1200


def test_gate_result_for_an_unknown_gate_is_ignored() -> None:
    from .sequence import gate

    s = fold(
        [ev("gate.result", 1, {"gate_id": "nope", "result": gate("sft", "running")["results"][0]})]
    )
    assert s.last_seq == 1 and dict(s.gates) == {}


def test_telemetry_swaps_only_telemetry_fields() -> None:
    s = fold(showcase()[:20])
    after = s.apply(ev("telemetry", 21, telemetry_data(21, 10_000)))
    changed = {
        f.name
        for f in dataclasses.fields(RunState)
        if getattr(after, f.name) is not getattr(s, f.name)
    }
    assert changed == {"last_seq", "telemetry", "telemetry_seq"}


def test_a_node_failure_chain_is_kept_as_node_incidents_stragglers_and_quorum() -> None:
    chain = node_failure_chain()
    s = fold(chain[:2])
    assert s.stragglers == {FAILING}
    assert s.node_states == {}
    assert s.quorum is not None and (s.quorum.quorum_id, s.quorum.participants) == (6, 4)
    s = fold(chain[2:5], s)
    # A failed node is no longer a straggler; the quorum shrank without it.
    assert s.stragglers == frozenset()
    assert s.node_states == {FAILING: "failed"}
    assert s.quorum is not None and (s.quorum.quorum_id, s.quorum.participants) == (7, 3)
    s = fold(chain[5:], s)
    assert s.node_states == {FAILING: "replaced", SPARE: "healthy"}
    assert [(n.type, n.hostname, n.fault_id) for n in s.node_events] == [
        ("straggler.detected", FAILING, None),
        ("node.degraded", FAILING, None),
        ("node.failed", FAILING, "f_12"),
        ("node.replaced", FAILING, "f_12"),
    ]
    assert s.node_events[0].detail == "step 1.52 s vs fleet 1.11 s (1.37×)"
    assert s.node_events[1].detail == "GPU 3 at 91 C"
    assert s.node_events[3].detail == f"replaced by {SPARE}"
    # On the run's clock (sim_ts), like faults and stages.
    assert s.node_events[2].at == chain[3].sim_ts
    assert s.last_seq == chain[-1].seq


def test_fleet_history_survives_a_resync_and_stays_bounded() -> None:
    s = fold(node_failure_chain())
    resynced = s.apply(ev("resync", 100, run_snapshot("running", last_seq=99)))
    assert resynced.node_events == s.node_events and resynced.node_states == s.node_states
    for i in range(MAX_HISTORY + 10):
        s = s.apply(ev("straggler.cleared", 200 + i, {"hostname": f"n{i}"}))
    assert len(s.node_events) == MAX_HISTORY
    assert s.node_events[-1].hostname == f"n{MAX_HISTORY + 9}"
    for i in range(MAX_NODES + 5):
        s = s.apply(ev("node.recovered", 1000 + i, {"hostname": f"h{i}"}))
    assert len(s.node_states) == MAX_NODES
    assert f"h{MAX_NODES + 4}" in s.node_states and "h0" not in s.node_states
