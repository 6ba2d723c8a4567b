"""`SteadyInput`: Textual's `Input` with a steady cursor, the app's one text field.

A blinking cursor repaints its line twice a second for as long as the field has focus: an
app left open in a pane for days on a filter, a picker or a modal would never be idle, and a
picture of it (a snapshot, a screenshot) would catch the cursor in either phase.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Input

__all__ = ["SteadyInput"]


class SteadyInput(Input):
    """An `Input` whose cursor does not blink (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cursor_blink = False
