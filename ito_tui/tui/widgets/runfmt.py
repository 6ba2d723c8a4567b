"""Formatting helpers shared by the run widgets: durations, money, counts, bars, glyphs.

Non-finite and out-of-range numbers are left to `ito_tui.format` (`NaN`, `∞`, `>999d`,
`1e308`): a diverged run is shown as such, never as `–` (no value) and never a crash.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from rich.text import Text

from ito_tui.format import special, special_duration, special_percent
from ito_tui.tui.format import safe as safe  # one definition, re-exported for the widgets

STATE_GLYPHS: dict[str, str] = {
    "pending": "·",
    "running": "▶",
    "gate_eval": "◆",
    "passed": "✓",
    "failed": "✗",
    "skipped": "⊘",
    "cancelled": "■",
}
"""A glyph per stage state; always shown next to the word, never colour alone."""

STATE_WORDS: dict[str, str] = {
    "pending": "pending",
    "running": "running",
    "gate_eval": "gate eval",
    "passed": "passed",
    "failed": "FAILED",
    "skipped": "skipped",
    "cancelled": "cancelled",
}

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


def literal(value: object, style: str = "") -> Text:
    """Backend text as a rich Text that is never interpreted as markup."""
    return Text(safe(value), style=style)


def stage_label(name: object) -> str:
    return STAGE_LABELS.get(str(name), safe(name))


def duration(seconds: float | None) -> str:
    """`42s`, `12m05s`, `3h07m`, `2d04h`; `–` when unknown."""
    if seconds is None:
        return "–"
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


def elapsed(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return ""
    return duration((end - start).total_seconds())


def usd(value: Decimal | float | None) -> str:
    """`$1,234` for large amounts, `$12.50` for small ones."""
    if value is None:
        return "–"
    text = special(value)
    if text is not None:
        return f"${text}"
    amount = Decimal(str(value))
    if abs(amount) >= 1000:
        return f"${amount:,.0f}"
    return f"${amount:,.2f}"


def count(value: float | None) -> str:
    """Counts with SI suffixes: `51.2B`, `340M`, `12.4K`."""
    if value is None:
        return "–"
    text = special(value)
    if text is not None:
        return text
    v = float(value)
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= div:
            return f"{v / div:.1f}{unit}"
    return f"{v:.0f}"


def number(value: float | None, digits: int = 3) -> str:
    """A compact number with `digits` significant figures; `–` when unknown."""
    if value is None:
        return "–"
    text = special(value)
    if text is not None:
        return text
    v = float(value)
    if v != 0 and (abs(v) >= 10_000 or abs(v) < 0.001):
        return count(v) if abs(v) >= 10_000 else f"{v:.1e}"
    return f"{v:.{digits}g}"


def pct(frac: float | None) -> str:
    if frac is None:
        return "–"
    return special_percent(frac) or f"{frac * 100:.0f}%"


def bar(frac: float, width: int) -> str:
    """A text progress bar of `width` cells with eighth-cell resolution (empty for NaN:
    `max(0.0, nan)` is 0.0)."""
    frac = min(1.0, max(0.0, frac))
    eighths = round(frac * width * 8)
    full, part = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[part] if part and full < width else ""
    return ("█" * full + partial).ljust(width, "░")[:width]
