"""`RunTracker`: what each event changes (`Changes`), chart markers, backfill, re-basing."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from ito_tui.contract import EventBase, Run, TelemetrySample, make_event
from ito_tui.state import EVERYTHING, NOTHING, Changes, RunTracker
from ito_tui.state.views import marker_kind

from .sequence import RUN_ID, T0, node_failure_chain, run_snapshot, showcase, telemetry_data


def ev(type_: str, seq: int, data: dict[str, Any]) -> EventBase:
    return make_event(type_, seq=seq, run_id=RUN_ID, ts=T0 + timedelta(seconds=seq), data=data)


def sample(seq: int, step: int, *, loss: float = 2.5) -> TelemetrySample:
    return TelemetrySample.model_validate(telemetry_data(seq, step, loss=loss))


def test_changes_combine_and_only_applied_data_is_truthy() -> None:
    assert not NOTHING and not Changes(log=True)  # history: nothing applied
    assert Changes(log=True).any and not NOTHING.any
    assert Changes(run=True) | Changes(telemetry=True) == Changes(run=True, telemetry=True)
    assert all((EVERYTHING.run, EVERYTHING.log, EVERYTHING.telemetry, EVERYTHING.timeline))
    assert EVERYTHING.proposals and bool(EVERYTHING)


def test_each_event_type_says_what_it_changed() -> None:
    tracker = RunTracker(RUN_ID)
    seen: dict[str, Changes] = {}
    for e in showcase():
        changes = tracker.feed(e)
        assert changes.run  # every new event replaces the state
        seen.setdefault(e.type, changes)
    # Telemetry reaches the charts, not the log (left out) nor the timeline.
    assert seen["telemetry"] == Changes(run=True, telemetry=True)
    assert seen["stage.started"] == Changes(run=True, log=True)
    # Checkpoints and faults change the timeline and mark the charts.
    for kind in ("checkpoint.saved", "checkpoint.failed", "fault.detected", "fault.recovered"):
        assert seen[kind] == Changes(run=True, log=True, telemetry=True, timeline=True), kind
    assert seen["proposal.created"] == Changes(run=True, log=True, proposals=True)
    # The approved rollback rewinds the step: a marker on the charts.
    assert seen["proposal.approved"] == Changes(run=True, log=True, telemetry=True, proposals=True)
    assert not seen["proposal.executed"].telemetry  # the rewind is marked once
    assert seen["gate.passed"].telemetry and seen["gate.failed"].telemetry
    assert not seen["gate.started"].telemetry and not seen["budget.warning"].telemetry


def test_a_duplicate_changes_nothing_and_history_only_the_log() -> None:
    events = showcase()
    tracker = RunTracker(RUN_ID)
    for e in events[:20]:
        tracker.feed(e)
    assert tracker.feed(events[5]) is NOTHING
    middle = events[len(events) // 2].seq
    seeded = RunTracker(Run.model_validate(run_snapshot(last_seq=middle)))
    # From before the snapshot: a log line (the log repaints), nothing applied.
    assert seeded.feed(events[2]) == Changes(log=True)
    assert seeded.feed(events[2]) is NOTHING  # logged once
    after = ev("stage.started", middle + 1, {"stage": "mid_train"})
    assert seeded.feed(after) == Changes(run=True, log=True)


def test_faults_recoveries_checkpoints_gates_and_rewinds_mark_every_chart() -> None:
    tracker = RunTracker(RUN_ID)
    for e in showcase():
        tracker.feed(e)
    labels = [label for _x, label in tracker.bank["loss"].markers]
    kinds = [marker_kind(label) for label in labels]
    assert kinds == ["checkpoint", "fault", "recovery", "rewind", "checkpoint", "gate", "gate"]
    assert "rewind 300→200" in labels and "gate mid_train failed" in labels
    assert tracker.bank["loss"].markers == tracker.bank["spend_usd"].markers
    assert tracker.rewinds == 1
    view = tracker.chart("loss", 40, None)
    assert [m.kind for m in view.markers] == kinds
    assert all(0 <= m.column < 40 for m in view.markers)


def test_a_fresh_backfill_rebuilds_the_bank_and_keeps_the_markers() -> None:
    tracker = RunTracker(RUN_ID)
    for e in showcase():
        tracker.feed(e)
    old = tracker.bank
    markers = old["loss"].markers
    page = [sample(seq, seq * 10) for seq in range(1, 11)]
    assert tracker.backfill(reversed(page)) == Changes(telemetry=True)  # sorted by seq
    assert tracker.bank is not old and tracker.bank["loss"].count == 10
    assert tracker.bank["loss"].last_x == page[-1].ts.timestamp()
    assert tracker.bank["loss"].markers == markers
    assert tracker.rewinds == 1  # the caption's count survives the new bank


def test_a_backfill_into_the_live_bank_skips_what_it_already_has() -> None:
    tracker = RunTracker(RUN_ID)
    for seq in (20, 21, 22):
        tracker.feed(ev("telemetry", seq, telemetry_data(seq, seq * 10)))
    bank = tracker.bank
    # A page overlapping the live samples: only those newer than the newest are new.
    page = [sample(seq, seq * 10) for seq in range(15, 26)]
    assert tracker.backfill(page, fresh=False) == Changes(telemetry=True)
    assert tracker.bank is bank and bank["loss"].count == 3 + 3  # 23, 24, 25
    assert tracker.backfill(page, fresh=False) == NOTHING  # all of it is there now
    assert bank["loss"].count == 6


def test_a_resync_at_or_below_the_last_seq_rebases_through_feed() -> None:
    tracker = RunTracker(RUN_ID)
    for e in showcase()[:40]:
        tracker.feed(e)
    assert tracker.last_seq == 40
    rewinds = tracker.state.rewinds
    # The backend's history went back to seq 12: its snapshot comes as a resync at 12.
    snap = run_snapshot(state="running", last_seq=12)
    assert tracker.feed(ev("resync", 12, snap)) == EVERYTHING
    assert tracker.last_seq == 12 and tracker.state.resynced == 1
    assert tracker.state.rewinds == rewinds  # what a Run does not carry stays
    # Events numbered from there apply rather than look like replays.
    changes = tracker.feed(ev("stage.started", 13, {"stage": "mid_train", "total_steps": 9}))
    assert changes and tracker.state.current_stage == "mid_train"
    # Its samples too, though the bank holds samples numbered up to 40 (the old history).
    count = tracker.bank["loss"].count
    assert tracker.feed(ev("telemetry", 14, telemetry_data(14, 140))).telemetry
    assert tracker.bank["loss"].count == count + 1


def test_a_resync_ahead_reseeds_and_repaints_everything() -> None:
    tracker = RunTracker(RUN_ID)
    tracker.feed(ev("run.accepted", 1, {"booking_id": "bk_1", "state": "queued"}))
    assert tracker.feed(ev("resync", 30, run_snapshot(last_seq=30))) == EVERYTHING
    assert tracker.last_seq == 30 and tracker.state.spend is not None


def test_seed_and_rebase_say_what_changed() -> None:
    tracker = RunTracker(RUN_ID)
    for e in showcase()[:30]:
        tracker.feed(e)
    assert tracker.seed(Run.model_validate(run_snapshot(last_seq=10))) is NOTHING  # older
    assert tracker.seed(Run.model_validate(run_snapshot(last_seq=31))) == EVERYTHING
    assert tracker.rebase(Run.model_validate(run_snapshot(last_seq=5))) == EVERYTHING
    assert tracker.last_seq == 5


def test_live_samples_a_backfill_already_holds_are_not_drawn_twice() -> None:
    # The page is fetched after the snapshot (seq 7): it holds samples the stream sends next.
    tracker = RunTracker(Run.model_validate(run_snapshot(last_seq=7)))
    tracker.backfill([sample(seq, seq * 10) for seq in range(1, 11)])
    for seq in range(8, 13):
        changes = tracker.feed(ev("telemetry", seq, telemetry_data(seq, seq * 10)))
        assert changes.run and changes.telemetry == (seq > 10)
    loss = tracker.bank["loss"]
    assert loss.count == 12 and loss.markers == ()  # no "x went back"
    assert tracker.state.telemetry is not None and tracker.state.telemetry.step == 120


def test_node_and_straggler_events_change_the_timeline_and_the_clock() -> None:
    tracker = RunTracker(RUN_ID)
    seen = {e.type: tracker.feed(e) for e in node_failure_chain()}
    for type_ in ("straggler.detected", "node.degraded", "node.failed", "node.replaced"):
        assert seen[type_] == Changes(run=True, log=True, timeline=True), type_
    assert seen["quorum.changed"] == Changes(run=True, log=True)
    # The run's clock is the events' sim_ts (what the projection measures against).
    assert tracker.clock == node_failure_chain()[-1].sim_ts


def test_an_ended_runs_spend_chart_ends_at_what_the_run_spent_as_the_header_says() -> None:
    # The last sample comes before the final checkpoint and gate eval; the run's end
    # carries the whole spend (16,000.00 here, the last sample 87.00).
    events = showcase()
    last_sample = max(e.seq for e in events if e.type == "telemetry")
    live = RunTracker(RUN_ID)
    for e in events:
        live.feed(e)
    header = live.progress().usd_spent
    assert header == Decimal("16000.00")
    view = live.chart("spend_usd", 40, None)
    assert view.value == 16000.0 and view.vmax == 16000.0
    assert live.bank.series["spend_usd"].last_x == live.bank.series["loss"].last_x
    assert not live.backfill([], fresh=False).telemetry  # drawn once: a repeat finds it
    assert live.bank.series["spend_usd"].count == live.bank.series["loss"].count + 1
    # Opened after the end: the snapshot, then the telemetry pages.
    opened = RunTracker(Run.model_validate(run_snapshot("failed", last_seq=events[-1].seq)))
    opened.backfill([sample(s, s * 10) for s in range(1, last_sample + 1)])
    assert opened.chart("spend_usd", 40, None).value == float(opened.progress().usd_spent or 0)
    # A run still going draws its samples only.
    going = RunTracker(RUN_ID)
    for e in events[:-1]:
        going.feed(e)
    last_spend = float(telemetry_data(last_sample, 0)["spend_usd"])
    assert going.chart("spend_usd", 40, None).value == last_spend
