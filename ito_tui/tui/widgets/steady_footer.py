"""`SteadyFooter`: Textual's `Footer` rebuilt only when what it shows changes, every screen's
footer.

Textual's footer removes and mounts all of its keys again each time its screen's bindings
are refreshed, whether or not anything it shows changed. A screen refreshes them when focus
moves, when a screen opens, and whenever our screens re-ask which actions are offered (the
runs list at every cursor move, the run screen as proposals come and go): ten rebuilds to
boot the app on a run, one per keystroke on the runs list. This footer compares what
`Screen.active_bindings` would show (each binding, whether it is enabled, its tooltip) with
what it showed last and rebuilds only on a difference: three rebuilds to boot, none while
the cursor moves. Its keys are made with the footer's `compact` already set, so that none
is restyled twice as it mounts (`textual_private.preset_footer_key`). Written against
Textual 8.2.8, where `Footer.bindings_changed` is the
screen signal's subscriber and rebuilds with `recompose`; tests/tui/test_steady_footer.py
checks both halves (no rebuild for the same bindings, the new keys for new ones).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from ito_tui.tui.textual_private import preset_footer_key

__all__ = ["SteadyFooter"]


class SteadyFooter(Footer):
    """A `Footer` that rebuilds only when its keys change (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shown: tuple[object, ...] | None = None
        """The bindings last shown: (binding, enabled, tooltip) for each active one."""

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            preset_footer_key(widget, self.compact)
            yield widget

    def bindings_changed(self, screen: Screen[Any]) -> None:
        # Textual rebuilds only for the screen on top while the app has focus; the
        # comparison counts only then, so a change seen unfocused is still rebuilt later.
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            shown = tuple(
                (binding, enabled, tooltip)
                for _node, binding, enabled, tooltip in screen.active_bindings.values()
            )
            if shown == self.shown:
                return
            self.shown = shown
        super().bindings_changed(screen)
