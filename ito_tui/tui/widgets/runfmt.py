"""What the run widgets draw besides numbers: stage-state glyphs, backend text as a literal
`rich.text.Text`, progress bars.

Numbers, durations, money, stage labels and state words are `ito_tui.format`'s (issue 17:
one definition each), backend text is `ito_tui.textsafe.safe`.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from ito_tui.format import duration
from ito_tui.textsafe import safe

STATE_GLYPHS: dict[str, str] = {
    "pending": "·",
    "running": "▶",
    "paused": "‖",
    "recovering": "↻",
    "gate_eval": "◆",
    "passed": "✓",
    "failed": "✗",
    "skipped": "⊘",
    "cancelled": "■",
}
"""A glyph per stage state; always shown next to the word, never colour alone."""


def literal(value: object, style: str = "") -> Text:
    """Backend text as a rich Text that is never interpreted as markup."""
    return Text(safe(value), style=style)


def elapsed(start: datetime | None, end: datetime | None) -> str:
    """The time from `start` to `end` (`3h07m`); empty while either is unknown."""
    if start is None or end is None:
        return ""
    return duration((end - start).total_seconds())


def bar(frac: float, width: int) -> str:
    """A text progress bar of `width` cells with eighth-cell resolution (empty for NaN:
    `max(0.0, nan)` is 0.0)."""
    frac = min(1.0, max(0.0, frac))
    eighths = round(frac * width * 8)
    full, part = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[part] if part and full < width else ""
    return ("█" * full + partial).ljust(width, "░")[:width]
