"""Every number formatter of the screens and commands takes any number the contract can
hand it (NaN, ±inf, ±1e308, 10**400, subnormals) and writes a short string."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ito_tui.commands import output
from ito_tui.tui import format as tui_format
from ito_tui.tui.widgets import runfmt
from ito_tui.tui.widgets.chart_text import default_format
from ito_tui.tui.widgets.telemetry import METRICS

numbers = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 10**400, 5e-324])
)
money = st.decimals(min_value=-(10**24), max_value=10**24, places=2, allow_nan=False)

FORMATTERS: dict[str, Callable[[float], str]] = {
    "tui.format.usd_short": tui_format.usd_short,
    "tui.format.count": tui_format.count,
    "tui.format.hours": tui_format.hours,
    "tui.format.span": tui_format.span,
    "tui.format.pct": tui_format.pct,
    "runfmt.duration": runfmt.duration,
    "runfmt.count": runfmt.count,
    "runfmt.number": runfmt.number,
    "runfmt.pct": runfmt.pct,
    "runfmt.usd": runfmt.usd,
    "output.hours": output.hours,
    "output.duration_s": output.duration_s,
    "chart default": default_format,
    **{f"chart {m.key}": m.fmt for m in METRICS},
}
WIDTH = 30


@pytest.mark.parametrize("name", sorted(FORMATTERS))
@given(value=numbers)
def test_a_formatter_never_raises_and_stays_short(name: str, value: float) -> None:
    text = FORMATTERS[name](value)
    assert isinstance(text, str) and len(text) <= WIDTH, (name, value, text)
    if isinstance(value, float) and math.isnan(value):
        assert "NaN" in text and "–" not in text, (name, text)  # data, not "no value"


@given(value=money)
def test_money_is_written_whatever_its_size(value: Decimal) -> None:
    for fn in (tui_format.usd, tui_format.usd_short, runfmt.usd, output.money):
        text = fn(value)
        # `$999,999,999,999,999.99` at most, then `$1e24`; never a 40-character amount.
        assert text.startswith(("$", "-$")) and len(text) <= 24, (fn, value, text)
