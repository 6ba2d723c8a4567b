"""How a number from the backend is shown, whatever it is: the one policy for the CLI and TUI.

A non-finite value is data (API.md v1.1: a diverged loss, an ETA divided by a throughput
of zero): NaN is shown as `NaN`, +Infinity as `∞`, −Infinity as `−∞` — never as the
missing-value mark, never an exception. A value beyond what a column can show is shown
bounded: durations of 1000 days or more as `>999d`, numbers of 1e15 or more in magnitude
in a short scientific form (`2.5e18`, `1e308`, `1e400` for an int no float can hold),
fractions past ±999 % as `>999%`. An int is never handed to `float()` unguarded (10**400
raises OverflowError there). Every function here takes any int, float or Decimal, returns
a short string (at most ~24 characters, whatever the magnitude) and never raises.

The formatters of the screens and commands keep their own layouts for ordinary values
and ask `special()` / `special_duration()` first (issue 17 folds them in here).
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal

__all__ = [
    "BIG",
    "INF",
    "MAX_DAYS",
    "NAN",
    "NEG_INF",
    "NONFINITE_MARKS",
    "Number",
    "fixed",
    "general",
    "integer",
    "nonfinite",
    "percent",
    "scientific",
    "special",
    "special_duration",
    "special_percent",
    "to_float",
]

NAN = "NaN"
INF = "∞"
NEG_INF = "−∞"
"""Marks of the non-finite values (U+2212 MINUS SIGN, as typeset, not a hyphen)."""
NONFINITE_MARKS = (NAN, INF, NEG_INF)

BIG = 1e15
"""Magnitude from which a number is written in scientific form (a column of ~8 cells)."""
MAX_DAYS = 999
"""The longest duration written out; anything longer is `>999d`."""
_MAX_SECONDS = (MAX_DAYS + 1) * 86_400
_MAX_FRAC = 9.995
"""From here a fraction rounds to 1000 % or more: written `>999%`."""

Number = int | float | Decimal


def nonfinite(value: object) -> str | None:
    """The mark of a non-finite float or Decimal (`NaN`, `∞`, `−∞`); None otherwise."""
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return NAN if math.isnan(value) else INF if value > 0 else NEG_INF
    if isinstance(value, Decimal) and not value.is_finite():
        return NAN if value.is_nan() else INF if value > 0 else NEG_INF
    return None


def to_float(value: Number) -> float:
    """`value` as a float for a chart: non-finite stays non-finite; an int or Decimal beyond
    float range becomes the largest float of its sign (finite, drawn at the edge), never an
    OverflowError and never a false infinity."""
    if isinstance(value, float):
        return value
    if isinstance(value, Decimal) and not value.is_finite():
        # float() refuses a signalling NaN (sNaN); every NaN is just NaN on a chart.
        return math.nan if value.is_nan() else math.copysign(math.inf, value)
    if not -sys.float_info.max <= value <= sys.float_info.max:
        return sys.float_info.max if value > 0 else -sys.float_info.max
    return float(value)


def scientific(value: Number) -> str:
    """`2.5e18`, `1e308`, `-1e400`, `5e-324`: any number in a short scientific form."""
    mark = nonfinite(value)
    if mark is not None:
        return mark
    if value == 0:
        return "0"
    # Decimal formats any int exactly, whatever its size (no float, no str() digit limit).
    text = format(Decimal(value), ".1e")
    mantissa, exponent = text.split("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}"


def special(value: Number, limit: float = BIG) -> str | None:
    """The text of a value an ordinary layout cannot show: the mark of a non-finite value,
    the scientific form of one `limit` or more in magnitude; None for an ordinary value."""
    mark = nonfinite(value)
    if mark is not None:
        return mark
    return None if -limit < value < limit else scientific(value)


def special_duration(value: Number, unit_s: float = 1.0) -> str | None:
    """The text of a duration (in units of `unit_s` seconds) that a duration layout cannot
    show: a non-finite mark, `>999d` from 1000 days on (`<−999d` below minus that);
    None when it is ordinary."""
    mark = nonfinite(value)
    if mark is not None:
        return mark
    limit = _MAX_SECONDS / unit_s
    if -limit < value < limit:
        return None
    return f">{MAX_DAYS}d" if value > 0 else f"<−{MAX_DAYS}d"


def special_percent(frac: Number) -> str | None:
    """The text of a fraction a percent layout cannot show: a non-finite mark, or `>999%` /
    `<−999%` past ±999 %; None when it is ordinary."""
    mark = nonfinite(frac)
    if mark is not None:
        return mark
    if not -_MAX_FRAC < frac < _MAX_FRAC:
        return f">{MAX_DAYS}%" if frac > 0 else f"<−{MAX_DAYS}%"
    return None


def fixed(value: Number, digits: int = 2, *, grouping: bool = False) -> str:
    """`value` with `digits` decimals (`3.142`, `8,412` with grouping); bounded otherwise."""
    text = special(value)
    if text is not None:
        return text
    return f"{value:{',' if grouping else ''}.{digits}f}"


def general(value: Number, digits: int = 3) -> str:
    """`value` to `digits` significant figures (`3.14`, `0.000123`, `1.2e+07`); bounded."""
    text = special(value)
    return text if text is not None else f"{value:.{digits}g}"


def integer(value: Number) -> str:
    """A count or step with thousands separators (`10,871`); bounded otherwise."""
    text = special(value)
    if text is not None:
        return text
    return f"{value:,}" if isinstance(value, int) else f"{value:,.0f}"


def percent(frac: Number, digits: int = 0) -> str:
    """A fraction as a percentage (`37%`, `37.5%` with one digit); bounded otherwise."""
    text = special_percent(frac)
    return text if text is not None else f"{frac * 100:.{digits}f}%"
