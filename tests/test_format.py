"""`ito_tui.format`: any number in, a short string out, never an exception."""

from __future__ import annotations

import math
import sys
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ito_tui.format import (
    fixed,
    general,
    integer,
    nonfinite,
    number,
    percent,
    scientific,
    special,
    special_duration,
    special_percent,
    stamps,
    to_float,
    usd_compact,
    when,
)

numbers = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**4000)
    | st.integers(min_value=-(10**4000), max_value=-(10**300))
    | st.decimals(allow_nan=True, allow_infinity=True)
)
"""Floats of every kind, ints of any size a JSON parser hands over, Decimals (money)."""
WIDTH = 24
"""The longest any formatter may write, decimals aside: `-999,999,999,999,999` at most,
then the scientific form (a 400-digit int is `1e400`, never 400 characters)."""


@given(value=numbers, digits=st.integers(0, 4))
def test_every_formatter_takes_any_number_and_writes_a_short_string(
    value: int | float | Decimal, digits: int
) -> None:
    texts = [
        scientific(value),
        fixed(value, digits),
        fixed(value, digits, grouping=True),
        general(value, digits + 1),
        integer(value),
        percent(value, digits),
        number(value, digits + 3),
        usd_compact(value, digits),
    ]
    for text in texts:
        assert isinstance(text, str) and 0 < len(text) <= WIDTH + digits, (value, texts)
    for guard in (special(value), special_duration(value), special_percent(value)):
        assert guard is None or 0 < len(guard) <= WIDTH, (value, guard)


@given(value=numbers)
def test_to_float_never_raises_and_keeps_finite_values_finite(value: int | float | Decimal) -> None:
    out = to_float(value)
    assert isinstance(out, float)
    assert math.isfinite(out) == (nonfinite(value) is None)


@pytest.mark.parametrize(
    ("value", "mark"),
    [
        (math.nan, "NaN"),
        (math.inf, "∞"),
        (-math.inf, "−∞"),
        (Decimal("NaN"), "NaN"),
        (Decimal("-Infinity"), "−∞"),
        (1.0, None),
        (10**400, None),
    ],
)
def test_non_finite_values_have_their_own_marks(value: object, mark: str | None) -> None:
    assert nonfinite(value) == mark
    assert mark is None or mark not in ("–", "—", "n/a", "")  # never the missing-value mark


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e308, "1e308"),
        (-1e308, "-1e308"),
        (10**400, "1e400"),
        (2.5e18, "2.5e18"),
        (sys.float_info.max, "1.8e308"),
        (5e-324, "4.9e-324"),
        (0, "0"),
    ],
)
def test_scientific_form_is_short_and_exact_in_its_exponent(value: float, text: str) -> None:
    assert scientific(value) == text


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (2.8, 3, "2.80"),  # a chart's `2.21–2.8` read at two precisions
        (2.21, 3, "2.21"),
        (-2.8, 3, "-2.80"),
        (12.0, 3, "12.0"),
        (1, 3, "1.00"),
        (0.05, 3, "0.0500"),
        (99.96, 3, "100"),  # not `100.`
        (99.94, 3, "99.9"),
        (0, 3, "0"),
        (0.009, 3, "9.0e-03"),
        (812.4, 3, "812"),
        (2.16282, 4, "2.163"),
        (3.0, 4, "3.000"),
        (812.44, 4, "812.4"),  # past 3 digits, each form gets decimals: a range's two
        (12_345.6, 4, "12.35K"),  # ends that read the same get them (chart_text)
        (12_345.6, 3, "12.3K"),
    ],
)
def test_a_measured_number_keeps_its_figures_zeros_included(
    value: float, digits: int, text: str
) -> None:
    assert number(value, digits) == text


def test_bounded_forms_of_durations_percentages_and_counts() -> None:
    assert special_duration(999 * 86_400) is None
    assert special_duration(1000 * 86_400) == ">999d"
    assert special_duration(1e308) == ">999d"
    assert special_duration(math.inf) == "∞" and special_duration(math.nan) == "NaN"
    assert special_duration(24_000, unit_s=3600.0) == ">999d"  # 24,000 hours
    assert special_duration(-1e308, unit_s=3600.0) == "<−999d"  # hours * 60 would be -inf
    assert special_percent(12.0) == ">999%" and special_percent(-12.0) == "<−999%"
    assert percent(math.nan) == "NaN" and percent(0.371, 1) == "37.1%"
    assert integer(10**400) == "1e400" and integer(10_871) == "10,871"
    assert fixed(3.14159, 3) == "3.142" and fixed(8412.4, 0, grouping=True) == "8,412"
    assert to_float(10**400) == sys.float_info.max and to_float(-(10**400)) < 0


def test_ordinary_values_keep_the_layout_f_strings_gave_them() -> None:
    """The policy only changes what the old formatting crashed on or misdrew."""
    for value in (0.0, 1.5, 3.14159, 1234.5678, 0.000123, 98_765.4):
        assert fixed(value, 3) == f"{value:.3f}"
        assert general(value, 6) == f"{value:g}"
        assert percent(value / 1e5, 0) == f"{value / 1e5:.0%}"


def test_a_proposal_and_a_cancel_prompt_show_a_diverged_run_as_data() -> None:
    """The shared phrases (CLI `proposals show`, the TUI's modal) and the cancel prompt."""
    from ito_tui.contract import ProposalImpact, ProposalTrigger, Spend
    from ito_tui.describe import evidence_phrases, impact_phrases
    from ito_tui.tui.screens.cancel import spend_text

    trigger = ProposalTrigger(reason="spike", step=10**400, loss=math.nan, loss_z=math.inf)
    assert evidence_phrases(trigger) == ["step 1e400", "loss NaN", "z ∞"]
    impact = ProposalImpact(lost_steps=10**400, added_gpu_hours=-math.inf, added_usd="1.00")
    assert impact_phrases(impact)[:2] == ["1e400 lost steps", "+−∞ GPU-h"]
    spend = Spend(gpu_hours=math.nan, usd_spent="1", usd_committed="1", budget_usd="9")
    assert "(NaN GPU-h)" in spend_text(spend, None).plain


def test_a_forecast_time_today_drops_the_seconds() -> None:
    # A projected finish to the second is false precision; a moment that happened keeps them.
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    at = datetime(2026, 12, 1, 21, 14, 24, tzinfo=UTC)
    assert when(at, now, seconds=False) == "21:14 UTC"
    assert when(at, now) == "21:14:24 UTC"
    assert when(at.replace(day=2), now, seconds=False) == "Dec 2 21:14 UTC"


def test_a_lists_times_carry_their_day_when_one_is_not_today_and_stay_aligned() -> None:
    now = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
    today = [
        datetime(2026, 12, 3, 0, 0, 5, tzinfo=UTC),
        datetime(2026, 12, 3, 23, 59, 59, tzinfo=UTC),
    ]
    assert stamps(today, now) == ["00:00:05", "23:59:59"]
    # Yesterday's line next to today's: both dated, in one width (a zero-padded day).
    yesterday = datetime(2026, 12, 2, 23, 59, 59, tzinfo=UTC)
    assert stamps([yesterday, *today], now) == [
        "Dec 02 23:59:59",
        "Dec 03 00:00:05",
        "Dec 03 23:59:59",
    ]
    # Another year: every line by its full date; another zone is written in UTC.
    last_year = datetime(2025, 12, 31, 10, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert stamps([last_year, today[0]], now) == ["2025-12-31 15:00:00", "2026-12-03 00:00:05"]
    assert stamps([], now) == []
