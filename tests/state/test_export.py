"""state/export.py: the CSV columns and rows of telemetry samples (pure)."""

from __future__ import annotations

import csv
import io
import math
from datetime import UTC, datetime

import pytest
from pydantic import TypeAdapter

from ito_tui.contract import TelemetrySample
from ito_tui.contract.sample_dicts import SampleDictPage
from ito_tui.state.export import (
    FIXED,
    columns,
    csv_rows,
    csv_text,
    dict_row_values,
    row_values,
    write_csv,
)
from tests.tui import pipeline_fakes


def sample(**changes: object) -> TelemetrySample:
    body = pipeline_fakes.sample(7, 70, datetime(2026, 11, 29, 12, 0, 1, 250_000, UTC), 3.25)
    return TelemetrySample.model_validate({**body, **changes})


def test_columns_are_the_fixed_fields_then_the_metrics_in_the_order_given() -> None:
    assert columns([]) == list(FIXED)
    assert columns(["lr", "grad_norm"])[-2:] == ["metrics.lr", "metrics.grad_norm"]
    assert FIXED[:4] == ("seq", "ts", "stage", "step")


def test_non_finite_values_are_nan_inf_and_missing_ones_empty() -> None:
    s = sample(
        loss="NaN",
        grad_norm="Infinity",
        loss_z="-Infinity",
        lr=None,
        metrics={"a": "NaN", "b": 1.5, "c": None, "d": "-Infinity"},
    )
    row = dict(zip(columns(["a", "b", "c", "d", "e"]), next(csv_rows([s], "abcde")), strict=True))
    assert row["loss"] == "nan" and row["grad_norm"] == "inf" and row["loss_z"] == "-inf"
    assert row["lr"] == "" and row["rl.reward_mean"] == ""
    assert row["metrics.a"] == "nan" and row["metrics.b"] == "1.5"
    assert row["metrics.c"] == "" and row["metrics.d"] == "-inf" and row["metrics.e"] == ""
    assert row["seq"] == "7" and row["step"] == "70" and row["ts"] == "2026-11-29T12:00:01.250000Z"
    assert row["spend_usd"] == f"{s.spend_usd:.2f}"


def test_write_csv_writes_what_csv_rows_says_and_reads_back() -> None:
    samples = [sample(seq=i, step=i, loss=v) for i, v in enumerate([1.0, math.nan, -math.inf])]
    names = ["x"]
    buffer = io.StringIO()
    write_csv(buffer, (row_values(s, names) for s in samples), header=columns(names))
    rows = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert rows == [columns(names), *csv_rows(samples, names)]
    losses = [float(r[FIXED.index("loss")]) for r in rows[1:]]
    assert losses[0] == 1.0 and math.isnan(losses[1]) and losses[2] == -math.inf


def test_text_with_commas_quotes_and_newlines_is_quoted() -> None:
    s = sample(stage='odd, "stage"\nname')
    buffer = io.StringIO()
    write_csv(buffer, [row_values(s, [])])
    assert next(csv.reader(io.StringIO(buffer.getvalue())))[2] == 'odd, "stage"\nname'


def as_dicts(samples: list[TelemetrySample]) -> list[dict[str, object]]:
    """The samples as `ItoClient.telemetry_dicts` gives them (through the wire's JSON)."""
    raw = "[" + ",".join(s.model_dump_json() for s in samples) + "]"
    page = TypeAdapter(SampleDictPage).validate_json('{"items":' + raw + "}")
    items: list[dict[str, object]] = page["items"]
    return items


@pytest.mark.parametrize("stage", ["pretrain", 'odd, "stage"', "null"])
def test_the_fast_csv_says_what_csv_rows_says(stage: str) -> None:
    samples = [
        sample(seq=1, loss="NaN", lr=1e-5, metrics={"a": "Infinity", "b": 1e16}),
        sample(seq=2, stage=stage, loss="-Infinity", grad_norm=None, metrics={"a": 0.1}),
        sample(seq=3, rl={"reward_mean": 0.5, "entropy": None, "max_staleness_steps": 2,
                          "staleness_bound": 4, "filtered_group_frac": 0.1, "ess_frac": "NaN"}),
    ]  # fmt: skip
    names = ["b", "a", "missing"]
    text = csv_text([dict_row_values(d, names) for d in as_dicts(samples)])
    got = list(csv.reader(io.StringIO(text)))
    expected = list(csv_rows(samples, names))
    assert len(got) == len(expected) == 3
    for row, want in zip(got, expected, strict=True):
        assert len(row) == len(columns(names))
        for a, b, column in zip(row, want, columns(names), strict=True):
            if a != b:
                assert float(a) == float(b), (column, a, b)
    assert got[1][FIXED.index("stage")] == stage
    assert got[0][FIXED.index("loss")] == "nan" and got[1][FIXED.index("loss")] == "-inf"
