"""`RunTracker.marks()`: the inspector's marks of a run (faults, recoveries, checkpoints,
rewinds, gate verdicts, proposals) at the right step, labelled in our words with the ids
literal, bounded, and placed at the right columns of the inspector."""

from __future__ import annotations

from datetime import timedelta

from ito_tui.contract import Run, TelemetrySample, make_event
from ito_tui.state import RunTracker
from ito_tui.state.inspect import Viewport, inspector_view, points_of
from ito_tui.state.inspect_marks import MAX_MARKS

from .sequence import RUN_ID, T0, run_snapshot, showcase, telemetry_data


def fed() -> RunTracker:
    tracker = RunTracker(RUN_ID)
    for e in showcase():
        tracker.feed(e)
    return tracker


def test_the_showcase_marks_every_kind_at_its_step_in_our_words() -> None:
    marks = fed().marks()
    assert [(m.kind, m.step, m.label) for m in marks] == [
        ("checkpoint", 200, "checkpoint step 200 (ckpt_2)"),
        ("fault", 300, "fault node_failure on n3 (f1)"),
        ("recovery", 260, "recovery node_failure · 40 steps lost (f1)"),
        ("proposal", 300, "proposal prop_1 (rollback + skip) pending"),
        ("proposal", 300, "proposal prop_1 (rollback + skip) approved"),
        ("rewind", 200, "rewind 300→200"),
        ("proposal", 300, "proposal prop_1 (rollback + skip) executed"),
        ("checkpoint", 210, "checkpoint failed at step 210"),
        ("gate", 210, "gate pretrain passed (gate_pretrain)"),
        ("proposal", 210, "proposal prop_2 (extend budget) pending"),
        ("proposal", 210, "proposal prop_2 (extend budget) expired"),
        ("gate", 210, "gate mid-train failed (gate_mid_train)"),
    ]
    assert [m.seq for m in marks] == sorted(m.seq for m in marks)


def test_a_mark_has_the_newest_samples_time_and_tokens_when_it_is_at_its_step() -> None:
    tracker = fed()
    by_label = {m.label: m for m in tracker.marks()}
    gate = by_label["gate pretrain passed (gate_pretrain)"]
    last_sample_x = tracker.bank.hidden["step"].last_x
    assert gate.ts == last_sample_x and gate.tokens == 210 * 1_048_576
    fault = by_label["fault node_failure on n3 (f1)"]
    assert fault.tokens == 300 * 1_048_576  # the newest sample was at step 300 too
    rewind = by_label["rewind 300→200"]
    assert rewind.tokens is None  # not the newest sample's step: the inspector maps it


def test_marks_land_at_their_columns_on_the_inspector() -> None:
    tracker = fed()
    samples = [d for e in showcase() if isinstance(d := getattr(e, "data", None), TelemetrySample)]
    points = points_of(samples, "loss")
    view = inspector_view(
        points, None, tracker.marks(), Viewport(), 30, key="loss", label="loss", unit="number"
    )
    columns = {m.label: c for c, m in view.marks}
    # Steps 10..300 over 30 columns: step s in column int((s - 10) / 290 * 30).
    assert columns["checkpoint step 200 (ckpt_2)"] == int(190 / 290 * 30)
    assert columns["fault node_failure on n3 (f1)"] == 29
    assert columns["rewind 300→200"] == int(190 / 290 * 30)
    assert any("ran twice (rewind)" in n for n in view.notes)
    timed = inspector_view(
        points, None, tracker.marks(), Viewport(axis="time"), 30,
        key="loss", label="loss", unit="number",
    )  # fmt: skip
    assert {m.kind for _, m in timed.marks} >= {"fault", "rewind", "gate", "proposal"}


def test_history_replayed_before_a_snapshot_is_marked_from_the_events() -> None:
    events = showcase()
    # Opened mid-way: the snapshot already holds every event the stream then replays.
    tracker = RunTracker(Run.model_validate(run_snapshot(last_seq=events[-1].seq)))
    for e in events:
        tracker.feed(e)
    marks = tracker.marks()
    fault = next(m for m in marks if m.kind == "fault")
    assert fault.step == 300 and fault.ts == events[fault.seq - 1].ts.timestamp()
    assert not any(m.kind == "rewind" for m in marks)  # the state said it, not an event


def test_marks_are_bounded() -> None:
    tracker = RunTracker(RUN_ID)
    for seq in range(1, MAX_MARKS + 300):
        data = {
            "fault_id": f"f{seq}",
            "kind": "xid" + "x" * 500,
            "node": "n1",
            "step": seq,
            "detected_after_s": 1.0,
        }
        tracker.feed(
            make_event(
                "fault.detected", seq=seq, run_id=RUN_ID, ts=T0 + timedelta(seconds=seq), data=data
            )
        )
    marks = tracker.marks()
    assert len(marks) == MAX_MARKS // 2 and marks[-1].seq == MAX_MARKS + 299  # half: faults
    assert all(len(m.label) < 140 for m in marks)  # a backend's long kind is cut


def test_a_sample_before_any_event_marks_nothing() -> None:
    tracker = RunTracker(RUN_ID)
    tracker.feed(make_event("telemetry", seq=1, run_id=RUN_ID, ts=T0, data=telemetry_data(1, 10)))
    assert tracker.marks() == ()


def test_checkpoints_never_push_the_first_fault_out() -> None:
    tracker = RunTracker(RUN_ID)
    fault = {"fault_id": "f0", "kind": "xid", "node": "n1", "step": 1, "detected_after_s": 1.0}
    tracker.feed(make_event("fault.detected", seq=1, run_id=RUN_ID, ts=T0, data=fault))
    for seq in range(2, 2 * MAX_MARKS + 2):
        data = {
            "checkpoint": {
                "checkpoint_id": f"c{seq}",
                "stage": "pretrain",
                "step": seq,
                "created_at": T0.isoformat(),
                "size_gb": 1.0,
                "blocking_s": 1.0,
                "persist_s": 1.0,
            }
        }
        tracker.feed(
            make_event(
                "checkpoint.saved",
                seq=seq,
                run_id=RUN_ID,
                ts=T0 + timedelta(seconds=seq),
                data=data,
            )
        )
    marks = tracker.marks()
    assert marks[0].label == "fault xid on n1 (f0)"  # a multi-week run's first fault stays
    assert len(marks) == MAX_MARKS // 2 + 1
    assert marks[-1].label == f"checkpoint step {2 * MAX_MARKS + 1:,} (c{2 * MAX_MARKS + 1})"
