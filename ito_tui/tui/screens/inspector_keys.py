"""The chart inspector's keys (`InspectorScreen.BINDINGS`).

The pairs are footer groups, written as one key each: `←→ Move`, `+- Zoom`, `[] Pan`. Written
out (`← ◀ → ▶ shift+← ◀◀ shift+→ ▶▶ + Zoom in - Zoom out [ Pan ◀ ] Pan ▶`) they left no room
at 80 columns for reset, axis, log and smoothing. The ten-column moves are in Help (F1)
only. Help lists every key with its own words and tooltip; the ids (`inspector.in`, …) are
what a keymap names.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding, BindingType

__all__ = ["KEYS"]

_MOVE, _ZOOM, _PAN = (Binding.Group(words, compact=True) for words in ("Move", "Zoom", "Pan"))


def _key(key: str, action: str, words: str, tooltip: str, name: str, **more: Any) -> Binding:
    return Binding(key, action, words, id=f"inspector.{name}", tooltip=tooltip, **more)


KEYS: list[BindingType] = [
    _key("left", "cursor(-1)", "◀", "Move the cursor one column left", "left", group=_MOVE),
    _key("right", "cursor(1)", "▶", "Move the cursor one column right", "right", group=_MOVE),
    _key("shift+left", "cursor(-10)", "◀◀", "Move the cursor ten columns", "left_ten", show=False),
    _key("shift+right", "cursor(10)", "▶▶", "Move the cursor ten columns", "right_ten", show=False),
    _key(
        "plus,equals_sign", "zoom(2.0)", "Zoom in", "Zoom in around the cursor", "in", group=_ZOOM
    ),
    _key("minus", "zoom(0.5)", "Zoom out", "Zoom out around the cursor", "out", group=_ZOOM),
    _key("left_square_bracket", "pan(-1)", "Pan ◀", "Pan back a quarter", "pan_left", group=_PAN),
    _key("right_square_bracket", "pan(1)", "Pan ▶", "Pan on a quarter", "pan_right", group=_PAN),
    _key("0", "reset", "Reset", "The whole run again", "reset"),
    _key("x", "axis", "Axis", "x axis: step, tokens seen, time", "axis"),
    _key("l", "log", "Log-Y", "Toggle a logarithmic y axis", "log"),
    _key("s", "smoothing", "Smooth", "EMA smoothing 0 / 0.6 / 0.9 / 0.99", "smooth"),
    _key("enter", "open_mark", "Open mark", "Open the mark under the cursor", "open"),
    _key("c", "copy", "CSV", "Write the visible points as CSV (data dir)", "copy"),
    _key("escape", "back", "Back", "Back to the run screen", "back"),
]
