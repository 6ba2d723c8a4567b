"""Open metrics (`metrics{}` of a telemetry sample, API.md v1.1) in the bank and the charts:
bounded per-name series, names listed, NaN/±inf/null kept as data, backfill fills them."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from ito_tui.contract import TelemetrySample, make_event
from ito_tui.state import NAN_BIT, POS_INF_BIT, RunTracker, TelemetryBank
from ito_tui.state.bank import MAX_OPEN_METRICS, OPEN_RAW

from .sequence import RUN_ID, T0, telemetry_data

AVG = "loss_metrics/global_avg_loss"
MFU = "mfu(%)"


def sample_data(seq: int, metrics: dict[str, Any]) -> dict[str, Any]:
    return {**telemetry_data(seq, seq * 10), "metrics": metrics}


def feed(tracker: RunTracker, seq: int, metrics: dict[str, Any]) -> None:
    tracker.feed(
        make_event(
            "telemetry",
            seq=seq,
            run_id=RUN_ID,
            ts=T0 + timedelta(seconds=seq),
            data=sample_data(seq, metrics),
        )
    )


def test_open_metrics_are_listed_charted_under_their_name_and_nan_is_data() -> None:
    tracker = RunTracker(RUN_ID)
    for seq in range(1, 11):
        feed(tracker, seq, {AVG: 3.0 - seq * 0.1, MFU: 39.6, "lr": 3e-4})
    feed(tracker, 11, {AVG: "NaN", MFU: "Infinity", "lr": None})
    bank = tracker.bank
    assert bank.metric_names() == [AVG, "lr", MFU]
    assert math.isnan(bank.metric_last(AVG) or 0.0)
    assert bank.metric_last(MFU) == math.inf
    assert bank.metric_last("lr") is None  # null as sent, not the value before it
    chart = tracker.chart(AVG, 11, None)
    assert (chart.key, chart.label, chart.unit) == (AVG, AVG, "number")
    assert chart.value is not None and math.isnan(chart.value)
    assert chart.odd[-1] & NAN_BIT and not any(chart.odd[:-1])
    assert chart.vmax == 2.9 and chart.vmin == 2.0  # the scale is the finite samples'
    assert tracker.chart(MFU, 11, None).odd[-1] & POS_INF_BIT
    # A fixed metric's key still means the fixed chart.
    assert tracker.chart("loss", 11, None).label == "loss"


def test_a_name_never_seen_draws_an_empty_chart_and_names_are_inert_labels() -> None:
    tracker = RunTracker(RUN_ID)
    feed(tracker, 1, {"evil\x1b[2J/name": 1.0})
    empty = tracker.chart("not/sent", 20, None)
    assert empty.value is None and empty.lows == (None,) * 20
    assert tracker.chart("evil\x1b[2J/name", 20, None).label == "evil␛[2J/name"


def test_names_past_the_cap_are_counted_not_stored_and_memory_is_bounded() -> None:
    bank = TelemetryBank()
    base = TelemetrySample.model_validate(sample_data(1, {}))
    for i in range(5000):
        sample = base.model_copy(update={"metrics": {f"m{i}": float(i), AVG: float(i)}})
        bank.ingest(sample, float(i))
    assert len(bank.metric_names()) == MAX_OPEN_METRICS
    assert AVG in bank.metric_names() and bank.metric_last(AVG) == 4999.0
    # Refused names are remembered up to a bound, then only counted.
    assert bank.refused_names == 1024
    assert bank.refused_overflow == 5000 - (MAX_OPEN_METRICS - 1) - 1024
    assert bank[AVG].count == 5000
    too_long = base.model_copy(update={"metrics": {"x" * 10_000: 1.0}})
    small = TelemetryBank()
    small.ingest(too_long)
    assert small.metric_names() == [] and small.refused_names == 1
    # Each open series is bounded whatever the run's length.
    assert all(s.nbytes() <= s.max_nbytes() for s in bank.open.values())
    assert bank.open[AVG].max_nbytes() < 200_000 and OPEN_RAW < 4096


def test_backfill_fills_the_open_series_and_later_series_get_earlier_markers() -> None:
    tracker = RunTracker(RUN_ID)
    page = [
        TelemetrySample.model_validate(
            {**sample_data(seq, {AVG: 2.0 + seq}), "ts": (T0 + timedelta(seconds=seq)).isoformat()}
        )
        for seq in range(1, 6)
    ]
    tracker.backfill(page)
    assert tracker.bank.metric_names() == [AVG] and tracker.bank[AVG].count == 5
    tracker.feed(
        make_event(
            "fault.detected",
            seq=6,
            run_id=RUN_ID,
            ts=T0 + timedelta(seconds=6),
            data={"fault_id": "f1", "kind": "node_failure", "detected_after_s": 1.0},
        )
    )
    feed(tracker, 7, {AVG: 8.0, "tflops": 391.6})
    # tflops appeared after the fault: its series holds the mark all the same (drawn by a
    # window that reaches back to it).
    assert any(label.startswith("fault") for _, label in tracker.bank.open["tflops"].markers)
    assert "fault" in {m.kind for m in tracker.chart(AVG, 10, None).markers}
