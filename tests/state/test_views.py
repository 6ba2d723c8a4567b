"""The views every screen draws, as pure functions of the run: charts, stages, progress."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from ito_tui.contract import EventBase, Run, RunSummary, make_event
from ito_tui.state import RunState, RunTracker, chart_view, progress, progress_of_run, stage_views
from ito_tui.state.grid import column_edges
from ito_tui.state.views import UNDER_WAY

from .sequence import PLAN, RUN_ID, T0, gate, proposal, run_snapshot, showcase, telemetry_data


def ev(type_: str, seq: int, data: dict[str, Any]) -> EventBase:
    return make_event(type_, seq=seq, run_id=RUN_ID, ts=T0 + timedelta(seconds=seq), data=data)


def snapshot(**extra: Any) -> Run:
    return Run.model_validate(run_snapshot(**extra))


def statuses(state: RunState) -> dict[str, str]:
    return {v.name: v.status for v in stage_views(state)}


# ---------------------------------------------------------------- charts


@pytest.mark.parametrize(
    ("stage", "label"),
    [("pretrain", "loss"), ("sft", "SFT loss"), ("dpo", "DPO loss"), ("rlvr", "RL loss")],
)
def test_the_loss_chart_is_named_after_the_stage(stage: str, label: str) -> None:
    tracker = RunTracker(snapshot(current_stage=stage))
    assert tracker.chart("loss", 20, None).label == label


def test_memory_reads_against_the_plans_hbm_once_the_plan_is_known() -> None:
    tracker = RunTracker(RUN_ID)
    assert tracker.chart("mem_gib", 20, None).sublabel == "per GPU"
    tracker.feed(ev("plan.selected", 1, {"plan": PLAN}))
    view = tracker.chart("mem_gib", 20, None)
    assert (view.label, view.sublabel, view.unit, view.floor) == ("memory", "of 80 GiB", "gib", 0.0)


def test_mfu_of_an_fp8_run_without_mfu_says_why() -> None:
    fp8 = RunTracker(snapshot(plan={**PLAN, "precision": "fp8", "est_mfu_frac": None}))
    data = telemetry_data(1, 10)
    data["mfu_frac"] = None
    fp8.feed(ev("telemetry", 1, data))
    assert fp8.chart("mfu", 20, None).note == "not measured (fp8)"
    bf16 = RunTracker(snapshot())
    bf16.feed(ev("telemetry", 1, data))
    assert bf16.chart("mfu", 20, None).note is None


def test_rl_staleness_shows_its_bound_from_the_rl_telemetry() -> None:
    tracker = RunTracker(snapshot(current_stage="rlvr"))
    assert tracker.chart("rl_staleness", 20, None).sublabel == ""
    data = telemetry_data(1, 10, stage="rlvr")
    data["rl"] = {
        "reward_mean": 0.4,
        "entropy": 1.2,
        "max_staleness_steps": 2,
        "staleness_bound": 4,
        "filtered_group_frac": 0.1,
        "ess_frac": 0.8,
    }
    tracker.feed(ev("telemetry", 1, data))
    view = tracker.chart("rl_staleness", 20, None)
    assert (view.sublabel, view.value, view.unit) == ("bound 4", 2.0, "steps")


def test_a_chart_has_its_columns_extremes_and_last_value_over_the_window() -> None:
    tracker = RunTracker(RUN_ID)
    for seq in range(1, 101):  # one sample a second, loss = seq
        tracker.feed(ev("telemetry", seq, telemetry_data(seq, seq, loss=float(seq))))
    run = tracker.chart("loss", 10, None)
    assert run.width == 10 and (run.vmin, run.vmax, run.value) == (1.0, 100.0, 100.0)
    assert run.lows[0] == 1.0 and run.highs[-1] == 100.0 and run.odd == (0,) * 10
    window = tracker.chart("loss", 10, 20.0)  # the last 20 s
    assert window.vmax == 100.0 and window.vmin is not None and window.vmin >= 79.0
    assert window.lows[-1] is not None and window.lows[-1] > 90.0
    assert chart_view(tracker.state, tracker.bank, "loss", 10, 20.0) == window


def test_markers_sit_in_the_column_of_their_moment_inside_the_window() -> None:
    tracker = RunTracker(RUN_ID)
    for seq in range(1, 101):
        tracker.feed(ev("telemetry", seq, telemetry_data(seq, seq)))
        if seq == 50:
            fault = {"fault_id": "f", "kind": "node_failure", "detected_after_s": 3.0}
            tracker.feed(ev("fault.detected", 1000, fault))  # a later seq: applies
            break
    for seq in range(1001, 1051):
        tracker.feed(ev("telemetry", seq, {**telemetry_data(seq, seq), "ts": _ts(seq - 950)}))
    view = tracker.chart("loss", 10, None)
    moment = (T0 + timedelta(seconds=50)).timestamp()  # the newest sample when it came
    bank = tracker.bank["loss"]
    assert bank.first_x is not None and bank.last_x is not None
    edges = column_edges(bank.first_x, bank.last_x, 10, None)
    [(column, kind)] = [(m.column, m.kind) for m in view.markers]
    assert kind == "fault" and edges[column] <= moment < edges[column + 1]
    assert 3 <= column <= 5  # halfway through the run
    assert view.markers[0].label == "fault node_failure"
    assert tracker.chart("loss", 10, 20.0).markers == ()  # out of the window


def _ts(seconds: int) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


# ---------------------------------------------------------------- stages


def test_post_training_none_skips_sft_dpo_and_rlvr_from_the_start() -> None:
    s = RunState.from_run(snapshot())  # the spec names no post-training
    got = statuses(s)
    assert [got[n] for n in ("sft", "dpo", "rlvr")] == ["skipped"] * 3
    assert got["pretrain"] == "pending" and got["mid_train"] == "pending"
    reasons = {v.name: v.reason for v in stage_views(s)}
    assert reasons["rlvr"] == "the spec asks for no post-training" and not reasons["pretrain"]


def test_post_training_stops_the_chain_where_the_spec_says() -> None:
    raw = run_snapshot()
    raw["spec"]["post_training"] = "sft"
    got = statuses(RunState.from_run(Run.model_validate(raw)))
    assert (got["sft"], got["dpo"], got["rlvr"]) == ("pending", "skipped", "skipped")
    dpo = next(
        v for v in stage_views(RunState.from_run(Run.model_validate(raw))) if v.name == "dpo"
    )
    assert dpo.reason == "post-training stops at SFT"


def test_a_stage_the_estimate_leaves_out_is_skipped_from_the_start() -> None:
    names = ("data_prep", "plan", "pretrain", "mid_train", "sft", "dpo")
    estimate = {
        "stages": [
            {"stage": n, "tokens": 1, "gpu_hours": 1.0, "wall_clock_h": 1.0, "usd": "1.00"}
            for n in names
        ],
        "total_gpu_hours": 6.0,
        "wall_clock_h_p50": 6.0,
        "wall_clock_h_p90": 7.0,
        "usd_p50": "6.00",
        "usd_p90": "7.00",
        "fits_budget": True,
        "fits_booking_window": True,
        "expected_interruptions": 0.0,
    }
    raw = run_snapshot(estimate=estimate)
    raw["spec"]["post_training"] = "dpo"
    got = statuses(RunState.from_run(Run.model_validate(raw)))
    assert {n for n, st in got.items() if st == "skipped"} == {"ladder", "long_context", "rlvr"}


def test_after_a_gate_failure_the_stages_that_will_not_run_are_skipped() -> None:
    raw = run_snapshot()
    raw["spec"]["post_training"] = "rlvr"
    t = RunTracker(Run.model_validate(raw))
    t.feed(ev("stage.started", 1, {"stage": "mid_train", "total_steps": 100}))
    t.feed(ev("stage.completed", 2, {"stage": "mid_train"}))
    t.feed(ev("gate.failed", 3, {"gate": gate("mid_train", "failed", passed=False)}))
    got = statuses(t.state)
    assert got["mid_train"] == "failed"
    # Still running (the run.failed has not come yet), but nothing after it will run.
    assert [got[n] for n in ("long_context", "sft", "dpo", "rlvr")] == ["skipped"] * 4
    assert next(v for v in t.stages() if v.name == "mid_train").gate is not None
    assert {v.reason for v in t.stages()[5:9]} == {"the mid-train gate failed"}


def test_a_cancel_cuts_one_stage_and_skips_the_rest() -> None:
    raw = run_snapshot()
    raw["spec"]["post_training"] = "dpo"
    t = RunTracker(Run.model_validate(raw))
    t.feed(ev("stage.started", 1, {"stage": "pretrain", "total_steps": 100}))
    t.feed(ev("run.cancelled", 2, {"detail": "operator", "failure": {"kind": "cancelled"}}))
    got = statuses(t.state)
    assert got["pretrain"] == "cancelled"
    assert [got[n] for n in ("mid_train", "long_context", "sft", "dpo")] == ["skipped"] * 4
    reasons = {v.name: v.reason for v in t.stages()}
    assert reasons["pretrain"] == reasons["sft"] == "the run was cancelled"
    assert reasons["rlvr"] == "post-training stops at DPO"  # the spec's reason first


def test_the_current_stage_of_a_run_waiting_for_a_person_is_paused() -> None:
    t = RunTracker(snapshot())
    t.feed(ev("stage.started", 1, {"stage": "pretrain", "total_steps": 100}))
    t.feed(ev("proposal.created", 2, proposal("pending")))
    t.feed(ev("run.state_changed", 3, {"from_state": "running", "to_state": "awaiting_approval"}))
    assert statuses(t.state)["pretrain"] == "paused"
    t.feed(ev("proposal.approved", 4, proposal("approved")))
    t.feed(ev("run.state_changed", 5, {"from_state": "awaiting_approval", "to_state": "running"}))
    assert statuses(t.state)["pretrain"] == "running"


def test_the_current_stage_of_a_run_recovering_from_a_fault_is_recovering() -> None:
    t = RunTracker(snapshot())
    t.feed(ev("stage.started", 1, {"stage": "pretrain", "total_steps": 100}))
    t.feed(ev("run.state_changed", 2, {"from_state": "running", "to_state": "recovering"}))
    (view,) = (v for v in t.stages() if v.name == "pretrain")
    assert view.status == "recovering" and statuses(t.state)["data_prep"] != "recovering"
    assert view.status in UNDER_WAY  # its progress stays drawn
    t.feed(ev("run.state_changed", 3, {"from_state": "recovering", "to_state": "running"}))
    assert statuses(t.state)["pretrain"] == "running"


def test_stage_views_list_every_stage_in_order_with_its_progress() -> None:
    t = RunTracker(RUN_ID)
    for e in showcase()[:45]:
        t.feed(e)
    views = t.stages()
    assert [v.name for v in views][:9] == [
        "data_prep", "ladder", "plan", "pretrain", "mid_train",
        "long_context", "sft", "dpo", "rlvr",
    ]  # fmt: skip
    pre = views[3]
    assert (pre.step, pre.total_steps) == (300, 1000)


# ---------------------------------------------------------------- progress


def test_progress_is_the_current_stages_progress_and_the_newest_spend() -> None:
    t = RunTracker(snapshot())
    t.feed(ev("stage.started", 1, {"stage": "pretrain", "total_steps": 1000}))
    p = {"step": 420, "total_steps": 1000, "frac": 0.42, "eta_s": 3600.0}
    t.feed(ev("stage.progress", 2, {"stage": "pretrain", "progress": p}))
    # A telemetry sample with a newer step does not move the step: one source.
    t.feed(ev("telemetry", 3, telemetry_data(3, 450)))
    got = t.progress()
    assert (got.stage, got.step, got.total_steps, got.eta_s) == ("pretrain", 420, 1000, 3600.0)
    assert got.usd_spent == Decimal("4.50") and got.budget_usd == Decimal("30000.00")
    assert got.state == "running"


def test_a_snapshot_and_the_events_that_led_to_it_give_the_same_progress() -> None:
    stages = [
        {
            "name": "pretrain",
            "state": "running",
            "progress": {"step": 420, "total_steps": 1000, "frac": 0.42, "eta_s": 3600.0},
        }
    ]
    snap = snapshot(last_seq=3, stages=stages)
    t = RunTracker(snapshot(last_seq=0))
    t.feed(ev("stage.started", 1, {"stage": "pretrain", "total_steps": 1000}))
    p = {"step": 420, "total_steps": 1000, "frac": 0.42, "eta_s": 3600.0}
    t.feed(ev("stage.progress", 2, {"stage": "pretrain", "progress": p}))
    t.feed(ev("budget.warning", 3, {"threshold_frac": 0.5, "usd_spent": "100.00",
                                    "budget_usd": "30000.00"}))  # fmt: skip
    assert t.progress() == progress_of_run(snap) == progress(RunState.from_run(snap))


def test_a_finished_run_has_no_eta() -> None:
    t = RunTracker(snapshot())
    p = {"step": 1000, "total_steps": 1000, "frac": 1.0, "eta_s": 0.0}
    t.feed(ev("stage.progress", 1, {"stage": "pretrain", "progress": p}))
    t.feed(ev("run.completed", 2, {"detail": "done"}))
    assert t.progress().eta_s is None and t.progress().state == "completed"


def test_a_stage_that_is_over_has_no_eta_while_it_is_still_the_current_one() -> None:
    """Between pretrain's end and the next stage's start the run's step is pretrain's last,
    without an ETA: the strip said `ETA 0s` where the list and the detail said none."""
    t = RunTracker(snapshot())
    t.feed(ev("stage.started", 1, {"stage": "pretrain", "total_steps": 1000}))
    p = {"step": 1000, "total_steps": 1000, "frac": 1.0, "eta_s": 0.0}
    t.feed(ev("stage.progress", 2, {"stage": "pretrain", "progress": p}))
    assert t.progress().eta_s == 0.0
    t.feed(ev("stage.completed", 3, {"stage": "pretrain"}))
    got = t.progress()
    assert (got.stage, got.step, got.eta_s, got.state) == ("pretrain", 1000, None, "running")


def test_the_same_run_gives_the_same_progress_whichever_way_it_arrived() -> None:
    stages = [
        {
            "name": "pretrain",
            "state": "running",
            "progress": {"step": 500, "total_steps": 1000, "frac": 0.5, "eta_s": 1800.0},
        }
    ]
    snap = snapshot(last_seq=40, stages=stages)  # spend $100.00
    expected = progress_of_run(snap)
    # Seeded out of band after events whose telemetry said $58.50 at seq 39.
    seeded = RunTracker(RUN_ID)
    for e in showcase()[:39]:
        seeded.feed(e)
    assert seeded.progress().usd_spent == Decimal("58.50")
    seeded.seed(snap)
    # A `resync` on the stream, ahead of or behind what was shown.
    ahead, behind = RunTracker(RUN_ID), RunTracker(RUN_ID)
    for e in showcase()[:20]:
        ahead.feed(e)
    for e in showcase()[:45]:
        behind.feed(e)
    ahead.feed(ev("resync", 40, run_snapshot(last_seq=40, stages=stages)))
    behind.feed(ev("resync", 40, run_snapshot(last_seq=40, stages=stages)))
    assert expected.usd_spent == Decimal("100.00") and expected.step == 500
    assert seeded.progress() == ahead.progress() == behind.progress() == expected


def test_a_runs_list_row_gives_the_runs_spend_and_stage() -> None:
    raw = run_snapshot(state="running", last_seq=9)
    summary = RunSummary.model_validate(
        {k: raw[k] for k in ("run_id", "booking_id", "state", "current_stage", "spend")}
        | {"created_at": T0.isoformat(), "updated_at": T0.isoformat()}
    )
    row, full = progress_of_run(summary), progress_of_run(Run.model_validate(raw))
    assert (row.stage, row.usd_spent, row.budget_usd, row.state) == (
        full.stage,
        full.usd_spent,
        full.budget_usd,
        full.state,
    )
    assert row.step is None and row.eta_s is None  # a row carries no stage progress
