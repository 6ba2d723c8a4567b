"""contract/sample_dicts.py: a page validated into dicts accepts and refuses exactly what
`TelemetryPage` does, and says the same values."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from ito_tui.contract import TelemetryPage
from ito_tui.contract.sample_dicts import SampleDictPage
from tests.tui import pipeline_fakes

BASE = pipeline_fakes.sample(5, 50, datetime(2026, 11, 29, 12, tzinfo=UTC), 3.1)
RL = {"reward_mean": 0.5, "entropy": None, "max_staleness_steps": 2, "staleness_bound": 4,
      "filtered_group_frac": 0.1, "ess_frac": "NaN"}  # fmt: skip


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in BASE.items() if k != key}


CASES: dict[str, dict[str, Any]] = {
    "as sent": BASE,
    "unknown fields": {**BASE, "new_field": [1, 2], "goodput": {**BASE["goodput"], "x": 1}},
    "non-finite": {**BASE, "loss": "NaN", "grad_norm": "-Infinity", "metrics": {"a": "Infinity"}},
    "rl": {**BASE, "rl": RL},
    "rl without a required field": {**BASE, "rl": {k: v for k, v in RL.items() if k != "ess_frac"}},
    "a fraction of 1.5": {**BASE, "mfu_frac": 1.5},
    "a percentage as goodput": {**BASE, "goodput": {**BASE["goodput"], "runtime_frac": 37}},
    "seq as text": {**BASE, "seq": "5"},
    "step as a float": {**BASE, "step": 50.5},
    "no loss": without("loss"),
    "no spend": without("spend_usd"),
    "spend not money": {**BASE, "spend_usd": "lots"},
    "a timestamp that is none": {**BASE, "ts": "yesterday"},
    "another offset": {**BASE, "ts": "2026-11-29T14:00:00+02:00"},
    "a metric as text": {**BASE, "metrics": {"a": "high"}},
    "no checkpoint": without("checkpoint"),
    "no metrics": without("metrics"),
    "stage unknown": {**BASE, "stage": "warmup"},
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_dicts_accept_and_refuse_what_the_models_do(name: str) -> None:
    raw = json.dumps({"items": [CASES[name]], "next_since_seq": 9})
    try:
        model = TelemetryPage.model_validate_json(raw)
    except ValidationError:
        model = None
    try:
        page = TypeAdapter(SampleDictPage).validate_json(raw)
    except ValidationError:
        page = None
    assert (model is None) == (page is None), name
    if model is not None and page is not None:
        assert page["next_since_seq"] == model.next_since_seq
        dumped = model.items[0].model_dump()
        assert json.dumps(page["items"][0], default=str, sort_keys=True) == json.dumps(
            dumped, default=str, sort_keys=True
        )
