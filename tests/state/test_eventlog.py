"""EventLog: bounded, filterable, human one-liners, unknown events shown raw and defanged."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ito_tui.contract import EventBase, Run, make_event
from ito_tui.state import EventLog, RunTracker, describe, severity_of

from .sequence import (
    FAILING,
    RUN_ID,
    SPARE,
    T0,
    node_failure_chain,
    run_snapshot,
    showcase,
    telemetry_data,
)


def test_log_is_bounded_and_keeps_the_newest() -> None:
    log = EventLog(capacity=10)
    for e in showcase():
        log.append(e)
    assert len(log) == 10
    assert [e.seq for e in log][-1] == showcase()[-1].seq
    assert log.appended > 10


def test_telemetry_and_progress_stay_out_unless_asked() -> None:
    events = showcase()
    log = EventLog()
    for e in events:
        log.append(e)
    assert not any(e.type in ("telemetry", "stage.progress") for e in log)
    full = EventLog(include=["telemetry"])
    for e in events:
        full.append(e)
    assert any(e.type == "telemetry" for e in full)


def test_filter_by_kind_severity_and_query() -> None:
    log = EventLog()
    for e in showcase():
        log.append(e)
    gates = log.filter(kind="gates")
    assert gates and all(e.kind == "gates" for e in gates)
    assert {e.type for e in gates} == {"gate.started", "gate.result", "gate.passed", "gate.failed"}
    errors = log.filter(severity="error")
    assert {e.type for e in errors} >= {"fault.detected", "gate.failed", "run.failed"}
    actions = log.filter(severity=["action"])
    assert {e.type for e in actions} == {"proposal.created", "loss.spike_detected"}
    spikes = log.filter(kind=("faults",), query="SKIPPED")
    assert [e.type for e in spikes] == ["loss.spike_detected"]
    assert (
        log.filter(kind="faults", severity="info", query="recovered")[0].type == "fault.recovered"
    )
    assert log.filter(query="no such text anywhere") == []


def test_summaries_are_human_and_single_line() -> None:
    by_type = {}
    for e in showcase():
        by_type[e.type] = describe(e)
    assert by_type["fault.recovered"].startswith("fault node_failure recovered after 16.0 min")
    assert by_type["fault.recovered"].endswith(" (f1)")  # the id last: a cut line keeps the news
    assert "escalated" in describe(showcase()[50])
    assert by_type["gate.failed"] == (
        "gate mid-train failed: bench0 acc 0.2 (needs >= 0.5) (gate_mid_train)"
    )
    assert by_type["budget.warning"] == "budget 50% used: $15,000.00 of $30,000.00"
    assert all("\n" not in t for t in by_type.values())


def test_step_numbers_read_with_thousands_separators() -> None:
    # As the stage list and detail write them (`step 36,758/137,844`); the log wrote 137844.
    started = make_event(
        "stage.started",
        seq=1,
        run_id=RUN_ID,
        ts=T0,
        data={"stage": "pretrain", "total_steps": 137_844},
    )
    assert describe(started) == "pretrain started (137,844 steps)"
    spike = make_event(
        "loss.spike_detected",
        seq=2,
        run_id=RUN_ID,
        ts=T0,
        data={"step": 87_300, "loss": 2.619, "loss_z": 14.8, "window": 128, "action": "skipped"},
    )
    assert describe(spike).startswith("loss spike at step 87,300: loss 2.619")


@pytest.mark.faults
def test_unknown_events_are_shown_raw_with_escapes_made_visible() -> None:
    e = make_event(
        "evil.event", seq=1, run_id=RUN_ID, ts=T0, data={"msg": "\x1b]0;pwned\x07\r\nnext\x9b2J"}
    )
    text = describe(e)
    assert text.startswith("evil.event {")
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\r" not in text
    assert "pwned" in text


@pytest.mark.faults
def test_backend_strings_in_known_events_are_defanged() -> None:
    e = make_event(
        "stage.failed",
        seq=1,
        run_id=RUN_ID,
        ts=T0,
        data={"stage": "pretrain", "reason": "disk \x1b[2Jfull\nreally"},
    )
    text = describe(e)
    assert text == "pretrain failed: disk ␛[2Jfull really"


def test_tracker_feeds_state_bank_and_log_once() -> None:
    t = RunTracker(RUN_ID)
    events = showcase()
    assert all(t.feed(e) for e in events)
    assert not any(t.feed(e) for e in events)
    assert t.last_seq == events[-1].seq
    assert t.bank["loss"].count == sum(1 for e in events if e.type == "telemetry")
    # The rollback shows as a marker on the charts.
    assert any("rewind 300→200" in label for _, label in t.bank["loss"].markers)
    n = len(t.log)
    late = make_event(
        "telemetry",
        seq=events[-1].seq + 1,
        run_id=RUN_ID,
        ts=T0 + timedelta(days=1),
        sim_ts=T0 + timedelta(days=2),
        data=telemetry_data(999, 5000),
    )
    assert t.feed(late)
    assert len(t.log) == n  # telemetry lives in the charts, not the log
    # Keyed by the sample's ts (as a GET /telemetry backfill is), not the envelope's sim_ts.
    assert t.bank["loss"].last_x == late.data.ts.timestamp()  # type: ignore[attr-defined]


def test_events_older_than_the_seeding_snapshot_go_to_the_log_only() -> None:
    events = showcase()
    middle = events[len(events) // 2].seq
    t = RunTracker(Run.model_validate(run_snapshot(last_seq=middle)))
    before = t.state
    # Replayed from the start (a screen opening the run mid-way): history is logged,
    # in order and once, and nothing of it reaches the state or the charts.
    assert not any(t.feed(e) for e in events if e.seq <= middle)
    assert not any(t.feed(e) for e in events if e.seq <= middle)  # a reconnect's replay
    assert t.state is before and t.bank["loss"].count == 0
    logged = [e.seq for e in t.log]
    worthy = [
        e.seq for e in events if e.seq <= middle and e.type not in ("telemetry", "stage.progress")
    ]
    assert logged == worthy and len(logged) > 3
    # Then the live events apply as always.
    assert all(t.feed(e) for e in events if e.seq > middle)
    assert [e.seq for e in t.log][: len(worthy)] == worthy and t.last_seq == events[-1].seq


def test_fleet_events_read_as_an_operator_says_them() -> None:
    texts = [(describe(e), severity_of(e)) for e in node_failure_chain()]
    assert texts == [
        ("quorum 6: 4 replicas (min 2)", "info"),
        (f"straggler {FAILING} (rank 17) step 1.52 s vs fleet 1.11 s (1.37×)", "warn"),
        (f"node {FAILING} degraded: GPU 3 at 91 C (replica r2)", "warn"),
        (f"node {FAILING} failed (replica r2, fault f_12)", "error"),
        ("quorum 7: 3 replicas (min 2)", "info"),
        (f"node {FAILING} replaced by {SPARE} (replica r2, fault f_12)", "info"),
        ("quorum 8: 4 replicas (min 2)", "info"),
    ]
    log = EventLog()
    for e in node_failure_chain():
        log.append(e)
    assert {e.kind for e in log} == {"fleet"}


def test_fleet_events_with_nothing_measured_or_a_quorum_below_its_minimum() -> None:
    def one(type_: str, data: dict[str, object]) -> EventBase:
        return make_event(type_, seq=1, run_id=RUN_ID, ts=T0, data=data)

    assert describe(one("straggler.detected", {"hostname": "n1"})) == "straggler n1 detected"
    nan = one("straggler.cleared", {"hostname": "n1", "step_time_s": "NaN", "fleet_p50_s": 1.0})
    assert describe(nan) == "straggler n1 cleared: step NaN s vs fleet 1.00 s"
    low = one("quorum.changed", {"quorum_id": 9, "participants": 1, "min_replicas": 2})
    assert describe(low) == "quorum 9: 1 replica (min 2) — below minimum, training stalls"
    assert severity_of(low) == "error"
    evil = one("node.failed", {"hostname": "n\x1b[2J1", "reason": "xid 79\r\nfake line"})
    assert describe(evil) == "node n␛[2J1 failed: xid 79␍ fake line"
