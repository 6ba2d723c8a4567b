"""Backoff arithmetic: exponential backoff with jitter, bounded delays, `Retry-After` parsing."""

from __future__ import annotations

import math
import random
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["bounded", "floored_jitter", "full_jitter", "parse_retry_after"]

_DELTA = re.compile(r"-?[0-9]{1,12}(?:\.[0-9]{1,9})?", re.ASCII)
"""delta-seconds (RFC 9110 §10.2.3), a decimal fraction and a minus sign tolerated."""


def full_jitter(
    attempt: int, base_s: float, cap_s: float, rng: random.Random | None = None
) -> float:
    """Delay before retry number `attempt` (1-based): uniform in [0, min(cap, base·2^(attempt-1))].

    Full jitter (AWS architecture blog, "Exponential Backoff And Jitter") spreads
    a herd of clients that all lost the backend at the same moment.
    """
    exp = min(attempt - 1, 32)  # 2**32 · base already exceeds any sane cap
    ceiling = min(cap_s, base_s * (2.0**exp))
    return (rng or random).uniform(0.0, max(ceiling, 0.0))


def bounded(seconds: float, floor_s: float, cap_s: float) -> float:
    """`seconds` clamped to [floor, cap]; NaN counts as the floor.

    Whatever a server sends (0, negative, NaN, 1e308), the result is a delay the
    client can live with. The floor wins over a cap set below it, and a floor that
    is not a positive finite number counts as 0.
    """
    floor_s = floor_s if math.isfinite(floor_s) and floor_s > 0 else 0.0
    cap_s = floor_s if math.isnan(cap_s) else max(cap_s, floor_s)
    if math.isnan(seconds):
        return floor_s
    return min(max(seconds, floor_s), cap_s)


def floored_jitter(
    attempt: int, base_s: float, floor_s: float, cap_s: float, rng: random.Random | None = None
) -> float:
    """Delay before reconnect number `attempt` (1-based): uniform in [floor, ceiling], where
    ceiling = base·2^(attempt-1) bounded to [floor, cap].

    Full jitter would sometimes give ~0 s; starting the range at the floor keeps
    the herd spread and a storm impossible. A base that is not a positive finite
    number (a server's `retry: 0`) counts as the floor.
    """
    low = bounded(floor_s, 0.0, math.inf)
    if not (math.isfinite(base_s) and base_s > 0):
        base_s = low
    exp = min(max(attempt, 1) - 1, 32)  # 2**32 · base already exceeds any sane cap
    ceiling = bounded(base_s * (2.0**exp), low, cap_s)
    return (rng or random).uniform(low, ceiling)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait per a `Retry-After` value (delta-seconds or HTTP-date).

    Returns None when the value is absent or does not parse (`1e9`, `NaN`, `²`,
    `1_000` are not delta-seconds), and never a negative number (a date in the
    past means "now"; callers apply their floor).
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if _DELTA.fullmatch(value):
        return max(float(value), 0.0)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    try:
        return max((when - now).total_seconds(), 0.0)
    except OverflowError:
        return None
