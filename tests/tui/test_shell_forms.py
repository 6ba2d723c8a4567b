"""The spec form's rules without widgets: parsing, messages, and where server errors land."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ito_tui.contract import FieldError, Refusal
from ito_tui.tui.forms import (
    FormValues,
    build_spec,
    check_data_ref,
    check_model_size,
    default_tokens,
    field_for_refusal,
    parse_budget,
    parse_count,
    server_errors,
)

CEILING = Decimal("5000000")
GOOD = FormValues(
    model_size="8B",
    data_ref="hf://allenai/dolma@v1.7",
    target_capability="general-chat",
    budget_usd="$12,500.50",
    post_training="dpo",
    target_tokens="160B",
    seq_len="8,192",
)


def test_a_complete_form_builds_the_spec() -> None:
    spec, errors = build_spec("bk_1", GOOD, budget_ceiling=CEILING, targets=["general-chat"])
    assert errors == {}
    assert spec is not None
    assert spec.budget_usd == Decimal("12500.50")
    assert spec.target_tokens == 160_000_000_000 and spec.seq_len == 8192
    assert str(spec.post_training) == "dpo"


@pytest.mark.parametrize("text", ["8B", "1.5B", "150M", "405B"])
def test_model_sizes_accepted(text: str) -> None:
    assert check_model_size(text) is None


@pytest.mark.parametrize("text", ["", "8", "8b ", "B8", "8GB", "1.5.2B", "0B"])
def test_model_sizes_refused_with_a_reason(text: str) -> None:
    if text == "8b ":
        assert check_model_size(text) is not None  # lower-case unit
        return
    assert check_model_size(text)


@pytest.mark.parametrize(
    "text",
    ["s3://bucket/key", "hf://org/ds", "hf://org/ds@rev", "catalog://web@1.3", "file:///data/x"],
)
def test_data_refs_accepted(text: str) -> None:
    assert check_data_ref(text) is None


@pytest.mark.parametrize(
    ("text", "hint"),
    [("ftp://x", "Scheme"), ("catalog://web", "name@version"), ("hf://org", "hf://org/dataset")],
)
def test_data_refs_refused_with_a_hint(text: str, hint: str) -> None:
    message = check_data_ref(text)
    assert message and hint in message


def test_budget_accepts_separators_and_enforces_the_ceiling() -> None:
    assert parse_budget("1,000,000", CEILING) == (Decimal("1000000"), None)
    assert parse_budget("$99.99", CEILING)[0] == Decimal("99.99")
    assert "at most" in (parse_budget("6,000,000", CEILING)[1] or "")
    assert parse_budget("0", CEILING)[1] and parse_budget("abc", CEILING)[1]
    assert "cents" in (parse_budget("1.005", CEILING)[1] or "")


def test_counts() -> None:
    assert parse_count("", field_name="x") == (None, None)
    assert parse_count("1.5T", field_name="x") == (1_500_000_000_000, None)
    assert parse_count("2e9", field_name="x") == (2_000_000_000, None)
    assert parse_count("8.5", field_name="x")[1]
    assert default_tokens("8B") == 160_000_000_000 and default_tokens("8X") is None


def test_untouched_errors_do_not_block_a_partial_form() -> None:
    spec, errors = build_spec("bk_1", FormValues(), budget_ceiling=CEILING)
    assert spec is None
    assert {"model_size", "data_ref", "budget_usd", "target_capability"} <= set(errors)


def test_refusals_and_validation_errors_land_on_fields() -> None:
    refusals = [
        Refusal(code="memory.does_not_fit", reason="too big", suggestion="smaller"),
        Refusal(code="budget.exceeds_ceiling", reason="too dear"),
        Refusal(code="x.unknown", reason="odd", field="spec.seq_len"),
    ]
    assert [field_for_refusal(r) for r in refusals] == ["model_size", "budget_usd", "seq_len"]
    errors = [FieldError(loc=["body", "data_ref"], msg="bad ref"), FieldError(loc=[], msg="?")]
    messages = server_errors(refusals=refusals, errors=errors)
    assert messages["model_size"] == "too big"
    assert messages["data_ref"] == "bad ref"
    assert messages[""] == "?"
