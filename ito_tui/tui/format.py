"""Moved: the screens' formatters are `ito_tui.format`'s (issue 17); this name stays only
until the last callers are switched (then the module goes)."""

from __future__ import annotations

from ito_tui.format import count as count
from ito_tui.format import duration as span
from ito_tui.format import duration_h as hours
from ito_tui.format import ends_in, starts_in
from ito_tui.format import percent as pct
from ito_tui.format import usd as usd
from ito_tui.format import usd_compact as usd_short
from ito_tui.textsafe import safe as safe

__all__ = ["count", "ends_in", "hours", "pct", "safe", "span", "starts_in", "usd", "usd_short"]
