"""The inspector's axis ticks: "nice" numbers (1, 2, 5 × 10^k) with their units on y,
steps and tokens (`182K`, `1.2B`) or UTC times (`14:03`, `Nov 30 14:03`) on x.

Labels are written with `ito_tui.format`'s formatters (`fixed`, `percent`, `when`), with
as many decimals as the tick spacing needs, so neighbouring ticks never read the same; where
no label can tell them apart (a span of 25,000 at 2e15, written short), one tick stays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from ito_tui.format import BIG, fixed, general, percent, when

from .inspect_points import XAxis, plot_column

__all__ = ["nice_step", "tick_label", "x_ticks", "y_ticks"]

T = TypeVar("T", int, float)

_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))
"""`format.count`'s units."""
_DAY = 86400
_TIME_STEPS: tuple[int, ...] = (1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)
_TIME_STEPS += (7200, 10800, 21600, 43200, _DAY, 2 * _DAY, 7 * _DAY, 14 * _DAY, 28 * _DAY)
"""Spacings of time ticks in seconds: whole seconds, minutes, hours, days, weeks."""
X_LABEL_CELLS = 14
"""Columns a time label and the gap after it take (`Nov 30 14:03` is 12)."""


def nice_step(span: float, count: int) -> float:
    """A spacing of 1, 2, 2.5 or 5 × 10^k giving about `count` ticks over `span` (> 0);
    0.0 when no float spacing does (a span of subnormals, or past the float range)."""
    rough = span / max(1, count)
    if not (rough > 0 and math.isfinite(rough)):
        return 0.0
    magnitude = 10.0 ** math.floor(math.log10(rough))
    if not magnitude > 0:
        return 0.0
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if rough <= m * magnitude:
            # Near the top of the float range 2 × 10^308 is inf: no spacing, not inf.
            return m * magnitude if math.isfinite(m * magnitude) else 0.0
    return 0.0


def _decimals(step: float) -> int:
    """Decimals that write multiples of `step` apart (0.25 → 2, 5 → 0)."""
    for d in range(10):
        scaled = step * 10**d
        if abs(scaled - round(scaled)) <= 1e-6 * scaled:
            return d
    return 10


def _number(value: float, step: float) -> str:
    if step < 1e-4 or abs(value) >= BIG:  # `3e-05`, `3.25e-05`, `2e+20`: as many digits
        if value == 0:  # as `step` needs
            return "0"
        mantissa, exponent = f"{step:.6e}".split("e")  # no 10**-324 (that is 0.0)
        digits = math.floor(math.log10(abs(value))) - int(exponent) + 1
        digits += _decimals(float(mantissa))
        return general(value, max(1, min(6, digits)))
    magnitude = abs(value)
    for limit, suffix in _SUFFIXES:
        if magnitude >= limit:
            return f"{fixed(value / limit, _decimals(step / limit))}{suffix}"
    return fixed(value, _decimals(step))


def tick_label(unit: str, value: float, step: float) -> str:
    """A tick of `unit` (`metrics.Unit`) at `value` on an axis spaced `step` apart:
    `2.15`, `182K`, `1.25B`, `40%`, `75 GiB`, `$1.2K`, `3 st`."""
    if abs(value) < step * 1e-9:
        value = 0.0  # not "-0.00"
    if unit == "fraction":
        return percent(value, _decimals(step * 100))
    text = _number(value, step)
    if unit == "gib":
        return f"{text} GiB"
    if unit == "usd":
        return f"-${text[1:]}" if text.startswith("-") else f"${text}"
    if unit == "steps":
        return f"{text} st"
    return text


def _multiples(lo: float, hi: float, step: float) -> list[float]:
    """The multiples of `step` in [lo, hi] (none when `step` cannot count them)."""
    if not (step > 0 and math.isfinite(lo / step) and math.isfinite(hi / step)):
        return []
    if (hi - lo) / step > 1000:
        return []
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [_clean(k * step, step) for k in range(first, last + 1)]


def _clean(value: float, step: float) -> float:
    """`value` without the float noise of a product (2.8, not 2.8000000000000003), to the
    digits `step` needs: a fixed 12 would round 1,972,256,132,635,000 past the axis' end."""
    if value == 0:
        return 0.0
    digits = math.floor(math.log10(abs(value))) - math.floor(math.log10(step)) + 3
    return float(f"{value:.{max(1, min(17, digits))}g}")


def _distinct(ticks: Iterable[tuple[T, str]]) -> tuple[tuple[T, str], ...]:
    """`ticks` without those that read the same as the one before: past 1e15 labels are
    short scientific (`2e15`), and five ticks 5,000 apart there would all say so."""
    out: list[tuple[T, str]] = []
    for tick in ticks:
        if not out or out[-1][1] != tick[1]:
            out.append(tick)
    return tuple(out)


def y_ticks(
    y_lo: float | None, y_hi: float | None, unit: str, log_y: bool, count: int = 5
) -> tuple[tuple[float, str], ...]:
    """(plotted value, label) of about `count` ticks inside [y_lo, y_hi] (plotted units:
    log10 of the value when `log_y`, whose ticks are powers of ten over a decade or more,
    else nice values of the data)."""
    if y_lo is None or y_hi is None or not y_hi > y_lo:
        return ()
    if not log_y:
        step = nice_step(y_hi - y_lo, count)
        return _distinct((v, tick_label(unit, v, step)) for v in _multiples(y_lo, y_hi, step))
    if y_hi - y_lo >= 1.0:
        every = max(1.0, float(math.ceil((y_hi - y_lo) / count)))
        out = []
        for k in _multiples(y_lo, y_hi, every):
            if not -324 < k < 309:  # beyond a float's powers of ten
                continue
            v = 10.0**k
            out.append((k, tick_label(unit, v, v)))
        return tuple(out)
    lo, hi = 10.0**y_lo, (10.0**y_hi if y_hi < 308.25 else math.inf)  # no OverflowError
    step = nice_step(hi - lo, count)
    return _distinct(
        (math.log10(v), tick_label(unit, v, step)) for v in _multiples(lo, hi, step) if v > 0
    )


def x_ticks(
    x_lo: float, x_hi: float, width: int, axis: XAxis, now: datetime
) -> tuple[tuple[int, str], ...]:
    """(column, label) of the x ticks inside [x_lo, x_hi], one per `X_LABEL_CELLS`
    columns at most: steps and tokens as counts (`182K`, `1.2B`), times in UTC with the
    date when not `now`'s day (`14:03`, `Nov 30 14:03`, `Nov 30` for whole days)."""
    count = max(1, width // X_LABEL_CELLS)
    if not x_hi > x_lo:
        return ()
    if axis != "time":
        step = max(1.0, nice_step(x_hi - x_lo, count))
        return _distinct(
            (plot_column(v, x_lo, x_hi, width), _number(v, step))
            for v in _multiples(x_lo, x_hi, step)
        )
    rough = (x_hi - x_lo) / count
    step_s = next((float(s) for s in _TIME_STEPS if s >= rough), float(_TIME_STEPS[-1]))
    out = []
    for t in _multiples(x_lo, x_hi, step_s):
        at = datetime.fromtimestamp(t, UTC)
        if step_s >= 86400:  # the date alone, with its year when not `now`'s
            other_day = at + timedelta(days=1 if at.month < 12 else -1)
            day = when(at, now if at.year != now.year else other_day, seconds=False)
            label = day.removesuffix(" UTC").rsplit(" ", 1)[0]
        else:
            label = when(at, now, seconds=step_s < 60).removesuffix(" UTC")
        out.append((plot_column(t, x_lo, x_hi, width), label))
    return tuple(out)
