"""Hypothesis: the event parser on arbitrary JSON raises nothing but EventParseError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ito_tui.contract import EVENT_CLASSES, EventBase, EventParseError, parse_event

pytestmark = pytest.mark.faults

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

envelopes = st.fixed_dictionaries(
    {
        "seq": st.integers() | st.text(max_size=3),
        "run_id": st.text(max_size=8),
        "type": st.sampled_from([*EVENT_CLASSES, "nope", ""]),
        "ts": st.sampled_from(["2026-11-29T12:00:00Z", "yesterday", 5]),
        "data": json_values,
    },
    optional={"stage": json_values, "sim_ts": json_values},
)


def _parse(raw: Any) -> None:
    try:
        event = parse_event(raw)
    except EventParseError:
        return
    assert isinstance(event, EventBase)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_arbitrary_json_never_raises_anything_else(value: Any) -> None:
    _parse(json.dumps(value))


@settings(max_examples=300, deadline=None)
@given(envelopes)
def test_envelope_shaped_json_never_raises_anything_else(value: dict[str, Any]) -> None:
    _parse(json.dumps(value))
    _parse(value)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_raise_anything_else(raw: bytes) -> None:
    _parse(raw)
