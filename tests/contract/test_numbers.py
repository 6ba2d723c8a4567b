"""The contract takes every number API.md v1.1 makes legal, and names what it refuses."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ito_tui.contract import EventParseError, Run, TelemetrySample, parse_event
from ito_tui.contract.common import TIMESTAMP_ERROR
from ito_tui.contract.events import TelemetryEvent
from tests.state.sequence import run_snapshot, telemetry_data

NONFINITE = ["NaN", "Infinity", "-Infinity"]


def sample_json(**fields: Any) -> str:
    """A telemetry sample as wire JSON (json.dumps writes NaN/Infinity as bare tokens)."""
    body = {**telemetry_data(1, 100), **fields}
    return json.dumps(body)


@pytest.mark.parametrize("form", ["token", "string"])
@pytest.mark.parametrize("word", NONFINITE)
@pytest.mark.parametrize(
    "field", ["loss", "grad_norm", "tokens_per_s_per_gpu", "mem_max_reserved_gib", "mfu_frac"]
)
def test_a_non_finite_measurement_is_data_and_goes_back_out_as_its_string(
    form: str, word: str, field: str
) -> None:
    """Both wire forms are read (pydantic already reads them for a plain float; a
    fraction needed the fix), and written back as the string, never as null."""
    literal = word if form == "token" else json.dumps(word)
    raw = sample_json(**{field: 0.0}).replace(f'"{field}": 0.0', f'"{field}": {literal}')
    sample = TelemetrySample.model_validate_json(raw)
    value = getattr(sample, field)
    assert not math.isfinite(value) and repr(value) == repr(float(word))
    assert json.loads(sample.model_dump_json())[field] == word


@pytest.mark.parametrize(
    "field",
    ["loss", "tokens_per_s_per_gpu", "mem_max_reserved_gib", "interruptions_per_1k_gpu_hours"],
)
def test_null_is_no_value_in_a_telemetry_measurement(field: str) -> None:
    sample = TelemetrySample.model_validate_json(sample_json(**{field: None}))
    assert getattr(sample, field) is None


def test_goodput_and_rl_fractions_may_be_nan_but_a_finite_one_stays_in_0_1() -> None:
    goodput = {**telemetry_data(1, 1)["goodput"], "runtime_frac": math.nan}
    rl = {
        "reward_mean": math.inf,
        "entropy": None,
        "max_staleness_steps": 10**400,
        "staleness_bound": 4,
        "filtered_group_frac": -math.inf,
        "ess_frac": None,
    }
    sample = TelemetrySample.model_validate_json(sample_json(goodput=goodput, rl=rl))
    assert math.isnan(sample.goodput.runtime_frac or 0.0)
    assert sample.rl is not None and sample.rl.max_staleness_steps == 10**400
    with pytest.raises(ValidationError, match="mfu_frac"):
        TelemetrySample.model_validate_json(sample_json(mfu_frac=37.0))  # percent, not frac


def test_non_finite_numbers_serialise_as_the_strings_api_md_names() -> None:
    sample = TelemetrySample.model_validate_json(
        sample_json(loss=math.nan, grad_norm=math.inf, lr=-math.inf, metrics={"x": math.nan})
    )
    wire = json.loads(sample.model_dump_json(), parse_constant=pytest.fail)
    assert (wire["loss"], wire["grad_norm"], wire["lr"]) == ("NaN", "Infinity", "-Infinity")
    assert wire["metrics"] == {"x": "NaN"}
    again = TelemetrySample.model_validate_json(sample.model_dump_json())
    assert math.isnan(again.loss or 0.0) and again.grad_norm == math.inf


EDGES = [
    "0001-01-01T00:00:00+14:00",  # before datetime's range once in UTC: OverflowError
    "9999-12-31T23:59:59-14:00",  # after it
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
]


@pytest.mark.parametrize("ts", EDGES)
def test_a_timestamp_at_the_edge_of_time_is_a_validation_error_naming_the_field(
    ts: str,
) -> None:
    with pytest.raises(ValidationError) as caught:
        TelemetrySample.model_validate_json(sample_json(ts=ts))
    assert caught.value.errors()[0]["loc"] == ("ts",)


@pytest.mark.parametrize("ts", EDGES)
def test_an_event_at_the_edge_of_time_is_an_event_parse_error_naming_ts(ts: str) -> None:
    raw = TelemetryEvent.model_validate(
        {"seq": 1, "run_id": "run_1", "type": "telemetry", "ts": "2026-11-29T12:00:00Z",
         "data": telemetry_data(1, 1)}
    ).model_dump(mode="json")  # fmt: skip
    with pytest.raises(EventParseError) as caught:
        parse_event(json.dumps({**raw, "ts": ts}))
    assert caught.value.field == "ts"


def test_a_run_snapshot_with_an_infinite_eta_and_huge_counts_is_accepted() -> None:
    body = run_snapshot()
    body["stages"] = [{"name": "pretrain", "state": "running"}]
    body["stages"][0]["progress"] = {
        "step": 10**400,
        "total_steps": 10**400,
        "tokens": 10**400,
        "total_tokens": 10**400,
        "frac": math.nan,
        "eta_s": math.inf,
    }
    run = Run.model_validate_json(json.dumps(body))
    progress = run.stages[0].progress
    assert progress is not None and progress.eta_s == math.inf and progress.tokens == 10**400


def _reference(text: str) -> datetime:
    """What a timestamp means: read by the stdlib, naive as UTC, converted to UTC."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@given(
    moment=st.datetimes(
        min_value=datetime(1000, 1, 2), max_value=datetime(8999, 12, 30), timezones=st.none()
    ),
    minutes=st.sampled_from([None, 0, 60, -300, 345, 14 * 60, -14 * 60]),
    zulu=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_every_form_of_a_timestamp_reads_as_the_same_utc_moment(
    moment: datetime, minutes: int | None, zulu: bool
) -> None:
    # `…Z` takes pydantic-core's native path, another offset or none `_utc`: the same value.
    if minutes is None:
        text = moment.isoformat()
    elif minutes == 0 and zulu:
        text = moment.isoformat() + "Z"
    else:
        text = moment.replace(tzinfo=timezone(timedelta(minutes=minutes))).isoformat()
    got = TelemetrySample.model_validate_json(sample_json(ts=text)).ts
    want = _reference(text)
    assert got == want and got.utcoffset() == timedelta(0)
    assert got.isoformat() == want.isoformat() and hash(got) == hash(want)


@pytest.mark.parametrize(
    "ts", ["0999-12-31T23:59:59Z", "9000-01-01T00:00:00Z", "8999-12-31T23:00:00-05:00", "soon"]
)
def test_a_timestamp_outside_the_years_says_which_years_it_may_have(ts: str) -> None:
    with pytest.raises(ValidationError) as caught:
        TelemetrySample.model_validate_json(sample_json(ts=ts))
    (error,) = caught.value.errors()
    assert error["loc"] == ("ts",) and error["msg"] == TIMESTAMP_ERROR


@pytest.mark.parametrize("ts", ["1000-01-01T00:00:00Z", "8999-12-31T23:59:59.999Z"])
def test_the_first_and_last_moments_of_the_years_are_timestamps(ts: str) -> None:
    assert TelemetrySample.model_validate_json(sample_json(ts=ts)).ts == _reference(ts)
