"""Small statistics helpers: median, min–max, percentiles, ratio of medians."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values: Sequence[float]) -> dict[str, Any]:
    """Median, min, max and the raw runs of one measured quantity."""
    if not values:
        return {"median": math.nan, "min": math.nan, "max": math.nan, "runs": []}
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": [round(v, 6) for v in values],
    }


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is zero (a zero baseline makes a ratio meaningless)."""
    if b == 0 or math.isnan(a) or math.isnan(b):
        return math.nan
    return a / b


def fmt(value: float, digits: int = 3) -> str:
    """A number for a table cell (NaN as an en dash)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
