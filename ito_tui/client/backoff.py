"""Backoff arithmetic: exponential backoff with full jitter, and `Retry-After` parsing."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["full_jitter", "parse_retry_after"]


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


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait per a `Retry-After` value (delta-seconds or HTTP-date).

    Returns None when the value is absent or unparseable, and never a negative
    number (a date in the past means "now").
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(int(value[:12]))  # 12 digits bound the int; caps apply later
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if math.isfinite(seconds):
        return max(seconds, 0.0)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max((when - now).total_seconds(), 0.0)
