"""The contract models: money, strictness of requests, leniency of responses, events."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from pydantic import ValidationError

from ito_tui.contract import (
    EVENT_CLASSES,
    EVENT_PAYLOADS,
    TERMINAL_EVENT_TYPES,
    EventParseError,
    Problem,
    Run,
    Spend,
    TrainingSpec,
    UnknownEvent,
    event_to_json,
    make_event,
    parse_event,
)

API_EVENT_TYPES = """run.accepted, run.state_changed, stage.started,
stage.progress, stage.completed, stage.skipped, stage.failed,
data.manifest_ready, data.dedup_completed, data.decontam_completed,
ladder.completed, plan.selected, plan.warning, checkpoint.saved,
checkpoint.failed, fault.detected, fault.recovered, slo.breached,
loss.spike_detected, proposal.created, proposal.approved,
proposal.rejected, proposal.expired, proposal.executed, gate.started,
gate.result, gate.passed, gate.failed, telemetry, budget.warning,
run.completed, run.failed, run.cancelled, resync"""
API_V11_EVENT_TYPES = """node.degraded, node.failed, node.replaced, node.recovered,
straggler.detected, straggler.cleared, quorum.changed"""
"""API.md v1.1 "Fleet": the fleet's changes on the run's event stream."""

TS = "2026-11-29T12:00:00Z"


def spec(**overrides: object) -> dict[str, object]:
    body: dict[str, object] = {
        "booking_id": "bk_1",
        "model_size": "8B",
        "data_ref": "catalog://fineweb-edu@1.3",
        "target_capability": "general",
        "budget_usd": "30000",
    }
    body.update(overrides)
    return body


def test_every_event_type_of_the_api_has_a_typed_class() -> None:
    listed = f"{API_EVENT_TYPES}, {API_V11_EVENT_TYPES}"
    expected = {t.strip() for t in listed.replace("\n", " ").split(",")}
    assert expected == set(EVENT_CLASSES)
    assert set(EVENT_PAYLOADS) == expected
    assert {"run.completed", "run.failed", "run.cancelled"} == TERMINAL_EVENT_TYPES


def test_money_is_a_decimal_in_memory_and_a_string_on_the_wire() -> None:
    spend = Spend(usd_spent="12.5", usd_committed=Decimal("3"), budget_usd=100)  # type: ignore[arg-type]
    assert spend.usd_spent == Decimal("12.50")
    wire = json.loads(spend.model_dump_json())
    assert wire["usd_spent"] == "12.50"
    assert wire["budget_usd"] == "100.00"


def test_money_rejects_nan_and_infinity() -> None:
    with pytest.raises(ValidationError):
        Spend(usd_spent="NaN", usd_committed="0", budget_usd="1")  # type: ignore[arg-type]


def test_request_models_forbid_unknown_fields() -> None:
    with pytest.raises(ValidationError) as info:
        TrainingSpec.model_validate(spec(surprise=1))
    assert info.value.errors()[0]["type"] == "extra_forbidden"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model_size", "8b"),
        ("model_size", "eight"),
        ("data_ref", "ftp://x"),
        ("data_ref", "catalog://no-version"),
        ("budget_usd", "0"),
        ("budget_usd", "-5"),
        ("post_training", "ppo"),
    ],
)
def test_spec_validation_rejects_bad_values(field: str, value: str) -> None:
    with pytest.raises(ValidationError):
        TrainingSpec.model_validate(spec(**{field: value}))


@pytest.mark.parametrize(
    "ref",
    [
        "s3://bucket/path",
        "hf://org/ds@rev",
        "hf://org/ds",
        "catalog://fineweb-edu@1.3",
        "file:///d",
    ],
)
def test_spec_accepts_each_data_scheme(ref: str) -> None:
    assert TrainingSpec.model_validate(spec(data_ref=ref)).data_ref == ref


def test_response_models_ignore_unknown_fields() -> None:
    body = {
        "type": "about:blank",
        "title": "Not found",
        "status": 404,
        "code": "run.not_found",
        "brand_new_member": {"x": 1},
    }
    problem = Problem.model_validate(body)
    assert problem.code == "run.not_found"


def test_unknown_event_type_is_kept_raw_not_an_error() -> None:
    event = parse_event(
        json.dumps(
            {"seq": 7, "run_id": "run_1", "type": "quantum.flux", "ts": TS, "data": {"a": [1]}}
        )
    )
    assert isinstance(event, UnknownEvent)
    assert event.type == "quantum.flux"
    assert event.data == {"a": [1]}


def test_known_event_with_unknown_fields_parses() -> None:
    event = parse_event(
        {
            "seq": 1,
            "run_id": "run_1",
            "type": "stage.started",
            "ts": TS,
            "future": True,
            "data": {"stage": "pretrain", "also_new": 3},
        }
    )
    assert type(event).__name__ == "StageStartedEvent"
    assert event.data.stage == "pretrain"  # type: ignore[attr-defined]
    assert event.kind == "stages"


@pytest.mark.faults
@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b"not json", None),
        (b"[]", None),
        (b'{"seq": 1}', "run_id"),
        (
            json.dumps(
                {"seq": 1, "run_id": "r", "type": "stage.started", "ts": TS, "data": {}}
            ).encode(),
            "data.stage",
        ),
        (
            json.dumps(
                {"seq": "x", "run_id": "r", "type": "telemetry", "ts": TS, "data": {}}
            ).encode(),
            "seq",
        ),
        (b"[" * 10_000, None),
    ],
)
def test_malformed_events_raise_only_the_typed_error_naming_the_field(
    raw: bytes, field: str | None
) -> None:
    with pytest.raises(EventParseError) as info:
        parse_event(raw)
    if field is not None:
        assert info.value.field == field
        assert field in str(info.value)


def test_event_roundtrip_through_the_wire_format() -> None:
    event = make_event(
        "budget.warning",
        seq=3,
        run_id="run_1",
        ts=TS,
        data={"threshold_frac": 0.8, "usd_spent": "800", "budget_usd": "1000"},
    )
    again = parse_event(event_to_json(event))
    assert again == event
    assert json.loads(event_to_json(event))["data"]["usd_spent"] == "800.00"


def test_resync_carries_a_full_run() -> None:
    run = {
        "run_id": "run_1",
        "booking_id": "bk_1",
        "spec": spec(),
        "state": "running",
        "spend": {"usd_spent": "1", "usd_committed": "2", "budget_usd": "3"},
        "last_event_seq": 42,
        "created_at": TS,
        "updated_at": TS,
    }
    event = parse_event({"seq": 43, "run_id": "run_1", "type": "resync", "ts": TS, "data": run})
    assert isinstance(event.data, Run)  # type: ignore[attr-defined]
    assert event.data.last_event_seq == 42  # type: ignore[attr-defined]
