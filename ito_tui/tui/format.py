"""Plain-text formatting for the shell's screens: money, sizes, relative times.

Non-finite and out-of-range numbers are left to `ito_tui.format` (`NaN`, `∞`, `>999d`,
`1e308`), so every screen shows them alike and none raises.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from ito_tui.describe import usd_exact
from ito_tui.format import special, special_duration, special_percent
from ito_tui.textsafe import visible


def safe(value: object) -> str:
    """A backend string made safe to show: control characters made visible."""
    return visible(str(value))


def usd(value: Decimal | float | None) -> str:
    """`$1,234.50`, or `—` when unknown."""
    if value is None:
        return "—"
    text = special(value)
    return f"${text}" if text is not None else usd_exact(value)


def usd_short(value: Decimal | float | None) -> str:
    """`$1.2K`, `$34.5K`, `$1.20M`: money where a column is narrow."""
    if value is None:
        return "—"
    text = special(value)
    if text is not None:
        return f"${text}"
    amount = float(value)
    for limit, suffix, digits in ((1e6, "M", 2), (1e3, "K", 1)):
        if abs(amount) >= limit:
            return f"${amount / limit:,.{digits}f}{suffix}"
    return f"${amount:,.2f}"


def count(value: float | None) -> str:
    """`160B`, `2.5T`, `350M`, `8,192`: big counts such as tokens."""
    if value is None:
        return "—"
    text = special(value)
    if text is not None:
        return text
    for limit, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= limit:
            scaled = value / limit
            text = f"{scaled:.1f}".rstrip("0").rstrip(".")
            return f"{text}{suffix}"
    return f"{value:,.0f}"


def hours(value: float | None) -> str:
    """`45 min`, `7.5 h`, `3.2 d`: a duration given in hours."""
    if value is None:
        return "—"
    text = special_duration(value, 3600.0)
    if text is not None:
        return text
    if value < 1:
        return f"{value * 60:.0f} min"
    if value < 48:
        return f"{value:.1f} h"
    return f"{value / 24:.1f} d"


def span(seconds: float) -> str:
    """`3d 4h`, `5h 12m`, `14m`, `40s`: a compact duration."""
    text = special_duration(seconds)
    if text is not None:
        return text
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86_400)
    hrs, rest = divmod(rest, 3_600)
    mins, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hrs}h"
    if hrs:
        return f"{hrs}h {mins}m"
    if mins:
        return f"{mins}m"
    return f"{secs}s"


def ends_in(ends_at: datetime, now: datetime) -> str:
    """`ends in 3d 4h`, or `ended 2h ago`, relative to `now` (a frozen clock in tests)."""
    delta = (ends_at - now).total_seconds()
    if delta >= 0:
        return f"ends in {span(delta)}"
    return f"ended {span(-delta)} ago"


def starts_in(starts_at: datetime, now: datetime) -> str:
    """`starts in 5h 2m`, or `started 1d 3h ago`."""
    delta = (starts_at - now).total_seconds()
    if delta >= 0:
        return f"starts in {span(delta)}"
    return f"started {span(-delta)} ago"


def pct(frac: float | None) -> str:
    """`37%`, or `n/a`."""
    if frac is None:
        return "n/a"
    return special_percent(frac) or f"{frac * 100:.0f}%"
