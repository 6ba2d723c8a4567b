"""Property tests of the reducer: replays never change the result, valid events never raise."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ito_tui.contract import EVENT_PAYLOADS, STAGE_ORDER, EventBase, make_event
from ito_tui.state import MAX_CHECKPOINTS, MAX_HISTORY, RunState, RunTracker
from ito_tui.state.fleet_events import MAX_NODES

from .sequence import RUN_ID, T0, gate, proposal, run_snapshot, showcase, spend, telemetry_data

pytestmark = pytest.mark.faults

CLEAN = showcase()
CLEAN_STATE = RunState.empty(RUN_ID)
for _e in CLEAN:
    CLEAN_STATE = CLEAN_STATE.apply(_e)


@st.composite
def delivered(draw: st.DrawFn) -> list[EventBase]:
    """The clean sequence as a flaky stream delivers it: after any event, a replay of
    any earlier stretch (a reconnect from a stale Last-Event-ID) or single duplicates."""
    out: list[EventBase] = []
    for i, e in enumerate(CLEAN):
        out.append(e)
        for _ in range(draw(st.integers(0, 2))):
            j = draw(st.integers(0, i))
            k = draw(st.integers(j, i + 1))
            out.extend(CLEAN[j:k])
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(delivered())
def test_any_interleaving_of_replays_gives_the_clean_state(stream: list[EventBase]) -> None:
    state = RunState.empty(RUN_ID)
    for e in stream:
        state = state.apply(e)
    assert state == CLEAN_STATE

    tracker = RunTracker(RUN_ID)
    accepted = [e.seq for e in stream if tracker.feed(e)]
    assert accepted == [e.seq for e in CLEAN]
    assert tracker.state == CLEAN_STATE


# ------------------------------------------------------------ arbitrary valid events

stage_names = st.sampled_from([s.value for s in STAGE_ORDER] + ["warmup_x"])
steps = st.integers(0, 10**6)
small = st.floats(0, 1e4, allow_nan=False)
texts = st.text(max_size=12)


def _payload(draw: st.DrawFn, type_: str, seq: int) -> dict[str, Any]:
    stage = draw(stage_names)
    if type_ == "telemetry":
        d = telemetry_data(seq, draw(steps), stage=stage, loss=draw(small))
        if draw(st.booleans()):
            d["rl"] = {
                "reward_mean": 0.3,
                "entropy": 1.2,
                "max_staleness_steps": 2,
                "staleness_bound": 4,
                "filtered_group_frac": 0.1,
                "ess_frac": 0.8,
            }
        return d
    if type_.startswith("proposal."):
        status = draw(st.sampled_from(["pending", "approved", "rejected", "expired", "executed"]))
        kind = draw(st.sampled_from(["rollback_and_skip", "reduce_lr", "extend_budget"]))
        return proposal(status, pid=draw(st.sampled_from(["prop_1", "prop_2"])), kind=kind)
    if type_.startswith("gate."):
        g = gate(
            stage,
            draw(st.sampled_from(["pending", "running", "passed", "failed"])),
            passed=draw(st.booleans()),
            results=draw(st.integers(0, 3)),
        )
        if type_ == "gate.result":
            r = gate(stage, "running", results=1)["results"][0]
            return {"gate_id": draw(st.sampled_from([g["gate_id"], "gate_nope"])), "result": r}
        return {"gate": g}
    fault_id = draw(st.sampled_from(["f1", "f2"]))
    host = draw(st.sampled_from(["b200-16n-ib-01", "b200-16n-ib-02", "spare-01"]))
    node = {
        "hostname": host,
        "replica_id": draw(st.none() | st.sampled_from(["r0", "r1"])),
        "reason": draw(st.none() | texts),
        "replaced_by": draw(st.none() | st.just("spare-01")),
        "fault_id": draw(st.none() | st.just(fault_id)),
    }
    measure = st.none() | st.floats(allow_nan=True, allow_infinity=True)
    straggler = {
        "hostname": host,
        "rank": draw(st.none() | st.integers(0, 1023)),
        "step_time_s": draw(measure),
        "fleet_p50_s": draw(measure),
    }
    table: dict[str, dict[str, Any]] = {
        "run.accepted": {"booking_id": "bk_1", "state": "queued"},
        "run.state_changed": {"to_state": draw(st.sampled_from(["running", "recovering", "zzz"]))},
        "stage.started": {"stage": stage, "total_steps": draw(st.none() | steps)},
        "stage.progress": {"stage": stage, "progress": {"step": draw(steps), "frac": 0.5}},
        "stage.completed": {"stage": stage, "summary": {"k": draw(texts)}},
        "stage.skipped": {"stage": stage, "reason": draw(texts)},
        "stage.failed": {"stage": stage, "reason": draw(texts)},
        "data.manifest_ready": {"documents": 1, "tokens": 2},
        "data.dedup_completed": {"documents_before": 2, "documents_after": 1, "removed_frac": 0.5},
        "data.decontam_completed": {"per_benchmark": {"gsm8k": 2}},
        "ladder.completed": {"decision": draw(st.sampled_from(["proceed", "stop", "other"]))},
        "plan.selected": {"plan": run_snapshot()["plan"]},
        "plan.warning": {"code": "c", "message": draw(texts)},
        "checkpoint.saved": {
            "checkpoint": {
                "checkpoint_id": f"ckpt_{draw(st.integers(0, 100))}",
                "stage": stage,
                "step": draw(steps),
                "created_at": T0.isoformat(),
                "size_gb": 1.0,
                "blocking_s": 1.0,
                "persist_s": 2.0,
            }
        },
        "checkpoint.failed": {"step": draw(steps), "reason": draw(texts)},
        "fault.detected": {"fault_id": fault_id, "kind": "node_failure", "detected_after_s": 1.0},
        "fault.recovered": {"fault_id": fault_id, "kind": "node_failure", "resumed_after_s": 2.0},
        "slo.breached": {
            "slo": draw(st.sampled_from(["detect", "resume"])),
            "fault_id": draw(st.none() | st.just(fault_id)),
            "value_s": 1,
            "limit_s": 1,
        },
        "loss.spike_detected": {
            "step": draw(steps),
            "loss": 1.0,
            "loss_z": 7.0,
            "action": draw(st.sampled_from(["skipped", "escalated"])),
        },
        "budget.warning": {"threshold_frac": 0.8, "usd_spent": "8.00", "budget_usd": "10.00"},
        "node.degraded": node,
        "node.failed": node,
        "node.replaced": node,
        "node.recovered": node,
        "straggler.detected": straggler,
        "straggler.cleared": straggler,
        "quorum.changed": {
            "quorum_id": draw(st.integers(0, 100)),
            "participants": draw(st.integers(0, 8)),
            "min_replicas": draw(st.none() | st.integers(1, 4)),
        },
        "run.completed": {"spend": spend()},
        "run.failed": {"failure": draw(st.none() | st.just({"kind": "fatal"}))},
        "run.cancelled": {},
        "resync": run_snapshot(
            draw(st.sampled_from(["running", "completed", "failed"])),
            last_seq=draw(st.integers(0, 500)),
        ),
    }
    return table.get(type_, {"anything": draw(texts)})


@st.composite
def valid_events(draw: st.DrawFn) -> list[EventBase]:
    types = [*EVENT_PAYLOADS, "some.future_event"]
    n = draw(st.integers(1, 40))
    seqs = draw(st.lists(st.integers(1, 300), min_size=n, max_size=n))
    out = []
    for seq in seqs:
        type_ = draw(st.sampled_from(types))
        data = _payload(draw, type_, seq)
        out.append(
            make_event(type_, seq=seq, run_id=RUN_ID, ts=T0 + timedelta(seconds=seq), data=data)
        )
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_events())
def test_apply_on_any_valid_events_never_raises_and_keeps_invariants(
    events: list[EventBase],
) -> None:
    tracker = RunTracker(RUN_ID, log_capacity=16)
    high = 0
    for e in events:
        fed = tracker.feed(e)
        # A resync at or below the last seq re-bases (the backend's history went back).
        assert bool(fed) == (e.seq > high or e.type == "resync")
        if fed and e.type == "resync":
            last = e.data.last_event_seq  # type: ignore[attr-defined]
            high = last if e.seq <= high else max(high, e.seq, last)
        elif fed:
            high = e.seq
        s = tracker.state
        assert s.last_seq == high
        assert [str(x.name) for x in s.stages[:9]] == [n.value for n in STAGE_ORDER]
        assert len(s.checkpoints) <= MAX_CHECKPOINTS
        assert all(
            len(t) <= MAX_HISTORY for t in (s.faults, s.loss_spikes, s.rewinds, s.node_events)
        )
        assert len(s.node_states) <= MAX_NODES and len(s.stragglers) <= MAX_NODES
        assert len(set(s.pending_proposals)) == len(s.pending_proposals)
        for pid in s.pending_proposals:
            if pid in s.proposals and e.type.startswith("proposal."):
                assert s.proposals[pid].status == "pending"
        assert len(tracker.log) <= 16
        assert s.outcome in (None, "completed", "gate_failed", "failed", "cancelled")
        assert (s.outcome is None) == (not s.terminal)
