"""`joblog.lines_for`, the pure mapping from a drained event to log lines: the formats an
operator greps for, NaN kept as torchtitan prints it, mfu only where it is measured."""

from __future__ import annotations

from typing import Any

from ito_tui.contract import LogLine
from ito_tui.desk_sim.joblog import lines_for
from ito_tui.desk_sim.joblog_context import LogContext

TS = "2026-12-01T22:00:00.000Z"


def _ctx(*, fp8: bool) -> LogContext:
    nodes = ("h100-4n-ib-01", "h100-4n-ib-02")
    return LogContext(
        seed=1,
        slots=nodes,
        slot_of={n: i for i, n in enumerate(nodes)},
        replica_of_slot=("replica_0", "replica_1"),
        gpus_per_node=8,
        params=8e9,
        hbm_gib=79.6,
        fp8=fp8,
    )


def _sample(**changes: Any) -> dict[str, Any]:
    sample = {"stage": "pretrain", "step": 120, "loss": 3.21537, "grad_norm": 0.85123,
              "tokens_per_s_per_gpu": 8412.4, "mfu_frac": 0.396,
              "mem_max_reserved_gib": 58.31}  # fmt: skip
    return {**sample, **changes}


def _texts(event: str, data: dict[str, Any], *, fp8: bool = False) -> list[LogLine]:
    lines = lines_for(event, data, _ctx(fp8=fp8), ts=TS, sim_ts=TS)
    return [LogLine.model_validate({"seq": i + 1, **x}) for i, x in enumerate(lines)]


def test_torchtitans_metrics_line_with_mfu_in_bf16_and_without_under_fp8() -> None:
    bf16 = _texts("telemetry", _sample())[0]
    assert bf16.text == (
        "step: 120  loss:  3.2154  grad_norm:  0.8512  memory: 58.31GiB(73.25%)  tps: 8,412  "
        "tflops: 403.80  mfu: 39.60%"
    )
    assert (bf16.rank, bf16.node, bf16.source, bf16.level) == (
        0,
        "h100-4n-ib-01",
        "trainer",
        "info",
    )
    fp8 = _texts("telemetry", _sample(), fp8=True)[0]
    assert fp8.text.endswith("tflops: 403.80") and "mfu" not in fp8.text


def test_a_diverged_loss_prints_nan_as_torchtitan_does() -> None:
    for loss in ("NaN", None, float("nan")):
        line = _texts("telemetry", _sample(loss=loss, grad_norm="Infinity"))[0]
        assert "loss:     nan  grad_norm:     inf" in line.text


def test_a_failing_gate_result_is_an_error_row_naming_the_benchmark() -> None:
    result = {"benchmark": "mmlu", "metric": "acc", "value": 0.5812, "stderr": 0.004,
              "threshold": 0.62, "comparator": ">=", "rule": "absolute",
              "passed": False}  # fmt: skip
    (line,) = _texts("gate.result", {"gate_id": "gate_1", "result": result})
    assert line.level == "error" and line.source == "system"
    assert line.text == "eval: |mmlu|acc|0.5812|± 0.0040| needs >= 0.6200 (absolute): FAIL"
    (ok,) = _texts("gate.result", {"gate_id": "gate_1", "result": {**result, "passed": True}})
    assert ok.level == "info" and ok.text.endswith(": pass")


def test_events_without_a_log_line_write_none() -> None:
    assert _texts("stage.progress", {"stage": "pretrain"}) == []
    assert _texts("stage.started", {"stage": "data_prep"}) == []
    assert _texts("some.future_event", {"x": 1}) == []


def test_a_stored_body_is_ascii_json_of_the_line_whatever_its_text() -> None:
    import json
    import sqlite3

    from ito_tui.desk_sim.joblog_store import LogQuery, LogStore

    store = LogStore(sqlite3.connect(":memory:"))
    hostile = ["a\rb\nc", "\x00\x1b[31mred\x1b[0m", "line\u2028sep\u0085", '"quoted" \\ é ☃ 🚀']
    lines = [{"ts": TS, "sim_ts": None, "rank": i, "node": "n\n1", "replica_id": None,
              "level": "warning", "source": "trainer", "text": text}
             for i, text in enumerate(hostile)]  # fmt: skip
    assert store.append("run_x", lines, line_bytes=4096, retention=10) == 4
    rows = store.after("run_x", 0, 10, LogQuery(), 10)
    for (seq, body), text in zip(rows, hostile, strict=True):
        assert body.isascii() and not any(c in body for c in "\r\n")
        line = LogLine.model_validate_json(body)
        assert (line.seq, line.text, line.node, line.cut) == (seq, text, "n\n1", False)
        assert json.loads(body)["sim_ts"] is None


def test_a_flood_line_is_a_function_of_its_seq_rank_and_time() -> None:
    from datetime import UTC, datetime

    from ito_tui.desk_sim.joblog_flood import flood_text

    when = datetime(2026, 12, 1, 22, 0, 5, 123456, tzinfo=UTC)
    assert flood_text(3, 7, when) == flood_text(3, 7, "1201 22:00:05.123456")
    assert flood_text(3, 7, when)[1].startswith("[rank7]:[D1201 22:00:05.123456 ")
    assert [flood_text(s, 0, when)[0] for s in (3, 4, 5)] == ["nccl", "dataloader", "trainer"]
