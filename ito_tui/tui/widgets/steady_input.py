"""`SteadyInput`: Textual's `Input` with a steady cursor, the app's one text field.

A blinking cursor repaints its line twice a second for as long as the field has focus: an
app left open in a pane for days on a filter, a picker or a modal would never be idle, and a
picture of it (a snapshot, a screenshot) would catch the cursor in either phase.

A field that loses focus shows its value from the start: Textual's `Input` keeps the view
scrolled to where the cursor was, so a data ref typed into the run form read
`atalog://fineweb-edu@1.3` once the operator tabbed on, its scheme cut.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import Input

__all__ = ["SteadyInput"]


class SteadyInput(Input):
    """An `Input` whose cursor does not blink, shown from its start when not focused
    (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cursor_blink = False

    def on_blur(self, event: events.Blur) -> None:
        self.scroll_home(animate=False)
