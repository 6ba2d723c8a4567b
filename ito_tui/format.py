"""How a number, a time or a name from the backend is shown: the one policy for the CLI,
the TUI and the event log. Headless (no Textual, no Rich, nothing of `state/`).

The forms, chosen where the screens and commands used to disagree (issue 17), for the
form an operator reads fastest:

- Missing: `MISSING` (`—`, an em dash) wherever a value is unknown; never `–`, `n/a`
  or an empty cell, so a gap reads the same on every screen.
- Money, exact: `usd` — `$1,234.50`, to the cent with thousands separators, everywhere a
  person compares amounts (spend vs budget, a proposal's cost, the cancel modal, the CLI).
  Compact: `usd_compact` — `$12.50`, `$846`, `$1.2K`, `$34.5K`, `$1.20M`, only where a
  column is narrow (the runs list's spend, a chart's min–max: a digit more, `$13.61K–
  13.62K`, where both ends would read the same).
- Counts (tokens, samples): `count` — `8,192` below ten thousand, then `12.4K`, `350M`,
  `160B`, `2.5T`, never `160.0B`. Steps and other exact integers: `integer` (`172,304`).
- Durations, one form: `duration` — `42s`, `12m05s`, `3h07m`, `2d04h` (725 s is `12m05s`
  on every screen; an estimate's hours too, `duration_h`). Relative: `ends in 3h07m`.
- Percent: `percent` — `37%` (`37.5%` where a digit matters, e.g. MFU).
- Times of day: `when` — `14:03:12 UTC` today, `Nov 30 14:03 UTC` another day, `2025-11-30
  14:03 UTC` another year: a decision time in a pane left open for days carries its date;
  so do a list's lines, aligned (`stamps`).
- Stage names: `stage_label` — `data prep`, `mid-train`, `long-context`, `SFT`, `DPO`, `RLVR`,
  on every screen and command; states: `status_label` (`gate eval`, `FAILED`).
- Progress: `progress_text` — `step 23,484/30,632 · ETA 3h52m`.

A non-finite value is data (API.md v1.1: a diverged loss, an ETA at zero throughput):
`NaN`, `∞`, `−∞`, never the missing mark, never an exception. Values beyond a column are
bounded: `>999d`, `>999%`, and from 1e15 a short scientific form (`2.5e18`, `1e400` for an int
no float holds; no int goes to `float()` unguarded). Every function takes any int, float or
Decimal, returns a short string (~24 characters at most) and never raises.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Protocol

from ito_tui.textsafe import visible

MISSING = "—"  # the one mark of a value that is not known (U+2014 EM DASH), on every screen

NAN, INF, NEG_INF = "NaN", "∞", "−∞"
"""Marks of the non-finite values (U+2212 MINUS SIGN, as typeset, not a hyphen)."""
NONFINITE_MARKS = (NAN, INF, NEG_INF)

BIG = 1e15
"""Magnitude from which a number is written in scientific form (a column of ~8 cells)."""
MAX_DAYS = 999
"""The longest duration written out; anything longer is `>999d`."""
_MAX_SECONDS = (MAX_DAYS + 1) * 86_400
_MAX_FRAC = 9.995  # from here a fraction rounds to 1000 % or more: written `>999%`

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
    """`value` as a float for a chart: non-finite stays non-finite; an int or Decimal beyond float
    range is the largest float of its sign (finite, at the edge): no OverflowError, no false ∞."""
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
    """The text of a duration (in units of `unit_s` seconds) a duration layout cannot show: a
    non-finite mark, `>999d` from 1000 days on (`<−999d` below minus that); None if ordinary."""
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


def integer(value: Number | None) -> str:
    """A step or an exact count, grouped (`172,304`); `—` when unknown; bounded."""
    if value is None:
        return MISSING
    text = special(value)
    if text is not None:
        return text
    return f"{value:,}" if isinstance(value, int) else f"{value:,.0f}"


def percent(frac: Number | None, digits: int = 0) -> str:
    """A fraction as a percentage (`37%`, `37.5%` with one digit); `—` when unknown."""
    if frac is None:
        return MISSING
    text = special_percent(frac)
    return text if text is not None else f"{frac * 100:.{digits}f}%"


def _scaled(value: float, units: tuple[tuple[float, str, int], ...]) -> str | None:
    """`value` in the largest unit it reaches once rounded (`999,960` is `1.0M`)."""
    for limit, suffix, digits in units:
        scaled = value / limit
        if abs(round(scaled, digits)) >= 1:
            return f"{scaled:.{digits}f}{suffix}"
    return None


_COUNT_UNITS = ((1e12, "T", 1), (1e9, "B", 1), (1e6, "M", 1), (1e3, "K", 1))
_MONEY_UNITS = ((1e12, "T", 2), (1e9, "B", 2), (1e6, "M", 2), (1e3, "K", 1))


def _money_value(value: object) -> Number | str:
    """A money value as an ordinary number, or the text to show instead: `—` for None, a
    backend string that is not an amount as sent (made visible), `$NaN`, `$∞`, `$1e24`."""
    if value is None:
        return MISSING
    if isinstance(value, int | float | Decimal):
        amount: Number = value
    else:
        try:
            amount = Decimal(str(value))
        except InvalidOperation:
            return visible(str(value))
    text = special(amount)
    return f"${text}" if text is not None else amount


def usd(value: object) -> str:
    """Money to the cent, `$1,234.50` (`-$12.00` below zero); `—` when unknown; `$NaN`,
    `$∞`, `$1e24` bounded. The exact form: spend, budgets, costs, the CLI."""
    amount = _money_value(value)
    if isinstance(amount, str):
        return amount
    exact = Decimal(str(amount)) if isinstance(amount, float) else Decimal(amount)
    sign = "-" if exact < 0 else ""
    return f"{sign}${abs(exact):,.2f}"


def usd_compact(value: object, extra: int = 0) -> str:
    """Money in a narrow column: `$12.50`, `$846`, `$1.2K`, `$1.20M`; `extra` digits: `$13.61K`."""
    amount = _money_value(value)
    if isinstance(amount, str):
        return amount
    v = float(amount)
    sign, v = ("-" if v < 0 else ""), abs(v)
    if v < 99.995:
        return f"{sign}${v:.2f}"
    if v < 999.5:
        return f"{sign}${v:.{extra}f}"
    return f"{sign}${_scaled(v, tuple((n, s, d + extra) for n, s, d in _MONEY_UNITS))}"


def count(value: Number | None) -> str:
    """A big count such as tokens: `8,192`, `12.4K`, `350M`, `160B`, `2.5T` (no `.0`)."""
    if value is None:
        return MISSING
    text = special(value)
    if text is not None:
        return text
    v = float(value)
    if abs(v) < 9_999.5:
        return f"{v:,.0f}"
    scaled = _scaled(v, _COUNT_UNITS) or f"{v:,.0f}"
    number_part, suffix = scaled[:-1], scaled[-1]
    return f"{number_part.removesuffix('.0')}{suffix}"


def number(value: Number | None, digits: int = 3) -> str:
    """A measured number in a few cells: `3.14`, `2.80` (`digits` figures, zeros kept: one
    precision in `2.21–2.80`), `0`, `812`, `8,412`, `12.4K`, `1.2e-03`; `812.4`, `12.43K`
    with `digits` past 3."""
    if value is None:
        return MISSING
    if (text := special(value)) is not None:
        return text
    v, more = float(value), max(0, digits - 3)
    if abs(v) >= 9_999.5:
        units = tuple((n, s, d + more) for n, s, d in _COUNT_UNITS)
        return (_scaled(v, units) or f"{v:,.{more}f}") if more else count(v)
    if abs(v) >= 100:
        return f"{v:,.{more}f}"
    if v == 0 or abs(v) < 0.01:
        return f"{v:.1e}" if v else "0"
    return f"{v:#.{digits}g}".removesuffix(".")  # 99.96 is `100.` in the `#` form


def duration(seconds: Number | None) -> str:
    """The one duration form: `42s`, `12m05s`, `3h07m`, `2d04h`; `—` when unknown; `NaN`,
    `∞`, `>999d` bounded. A negative duration (clock skew) is `0s`."""
    if seconds is None:
        return MISSING
    text = special_duration(seconds)
    if text is not None:
        return text
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600:02d}h"


def duration_h(hours: Number | None) -> str:
    """A duration given in hours (an estimate's), in the one form: `7h30m`, `3d04h`."""
    if hours is None:
        return MISSING
    text = special_duration(hours, 3600.0)  # before multiplying: 1e306 h is not ∞
    return text if text is not None else duration(hours * 3600)


def ends_in(at: datetime, now: datetime) -> str:
    """`ends in 3d04h`, or `ended 2h05m ago`, relative to `now` (a frozen clock in tests)."""
    delta = (at - now).total_seconds()
    return f"ends in {duration(delta)}" if delta >= 0 else f"ended {duration(-delta)} ago"


def starts_in(at: datetime, now: datetime) -> str:
    """`starts in 5h02m`, or `started 1d03h ago`."""
    delta = (at - now).total_seconds()
    return f"starts in {duration(delta)}" if delta >= 0 else f"started {duration(-delta)} ago"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def when(at: datetime | None, now: datetime, *, seconds: bool = True) -> str:
    """A moment in UTC: `14:03:12 UTC` on `now`'s day, `Nov 30 14:03 UTC` on another day of its
    year, `2025-11-30 14:03 UTC` in another year; `—` when unknown. Month names are English
    whatever the locale. `seconds=False` for a forecast (`14:03 UTC`): no false precision."""
    if at is None:
        return MISSING
    t, today = _utc(at), _utc(now)
    if t.date() == today.date():
        return f"{t:%H:%M:%S} UTC" if seconds else f"{t:%H:%M} UTC"
    day = f"{_MONTHS[t.month - 1]} {t.day}" if t.year == today.year else f"{t:%Y-%m-%d}"
    return f"{day} {t:%H:%M} UTC"


def stamps(moments: Sequence[datetime], now: datetime) -> list[str]:
    """A list's line times, UTC to the second, aligned: `14:03:12` when all are on `now`'s day,
    else each with its day (`Dec 02 14:03:12`; `2025-12-02 14:03:12` if one is another year)."""
    ts, today = [_utc(m) for m in moments], _utc(now)
    if all(t.date() == today.date() for t in ts):
        return [f"{t:%H:%M:%S}" for t in ts]
    if all(t.year == today.year for t in ts):
        return [f"{_MONTHS[t.month - 1]} {t:%d %H:%M:%S}" for t in ts]
    return [f"{t:%Y-%m-%d %H:%M:%S}" for t in ts]


STAGE_LABELS: dict[str, str] = {
    "data_prep": "data prep",
    "ladder": "ladder",
    "plan": "plan",
    "pretrain": "pretrain",
    "mid_train": "mid-train",
    "long_context": "long-context",
    "sft": "SFT",
    "dpo": "DPO",
    "rlvr": "RLVR",
}
"""A person's name for each pipeline stage; an unknown stage is shown as sent (safe)."""


def stage_label(name: object) -> str:
    """`data prep`, `mid-train`, `SFT`: a stage's name as every screen and command writes it."""
    if name is None:
        return MISSING
    return STAGE_LABELS.get(str(name), visible(str(name)))


STATUS_WORDS: dict[str, str] = {
    "gate_eval": "gate eval",
    "failed": "FAILED",
    "awaiting_approval": "awaiting approval",
}
"""States not written as their API name with spaces (a failure in capitals stands out)."""


def status_label(status: object) -> str:
    """`running`, `gate eval`, `FAILED`, `awaiting approval`: a stage's or run's state."""
    if status is None:
        return MISSING
    text = str(status)
    return STATUS_WORDS.get(text, visible(text.replace("_", " ")))


class HasProgress(Protocol):
    """What `progress_text` reads (`state.views.Progress`, a contract `StageProgress`)."""

    @property
    def step(self) -> int | None: ...
    @property
    def total_steps(self) -> int | None: ...
    @property
    def eta_s(self) -> float | None: ...


def progress_text(p: HasProgress) -> str:
    """`step 23,484/30,632 · ETA 3h52m` (no ETA when none is known); `—` before a step."""
    if p.step is None:
        return MISSING
    text = f"step {integer(p.step)}"
    if p.total_steps:
        text += f"/{integer(p.total_steps)}"
    if p.eta_s is not None:
        text += f" · ETA {duration(p.eta_s)}"
    return text


def metric_value(unit: str, value: Number | None, extra: int = 0) -> str:
    """A telemetry metric's value by its unit (`state.metrics.Unit`): `3.14`, `96.2%`, `75 GiB`,
    `$34,516.10`, `3 steps`; `—` when unknown; `extra` digits tell close values apart."""
    if value is None:
        return MISSING
    if unit == "fraction":
        return percent(value, 1 + extra)
    if unit == "gib":
        return f"{fixed(value, extra)} GiB"
    if unit == "usd":
        return usd(value)
    if unit == "steps":
        return f"{fixed(value, 0)} steps"
    return number(value, 3 + extra)


def metric_compact(unit: str, value: Number | None, extra: int = 0) -> str:
    """`metric_value` for a narrow stats column: `$34.5K`, `3 st`; the others alike."""
    if unit == "usd":
        return usd_compact(value, extra)
    if unit == "steps" and value is not None:
        return f"{fixed(value, 0)} st"
    return metric_value(unit, value, extra)
