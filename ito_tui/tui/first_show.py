"""`StyledOnFirstShow`: a screen shown for the first time without Textual restyling all of it.

Textual restyles a screen and every widget in it each time the screen is shown (a
`ScreenResume` event with `refresh_styles`), the first time too, when every widget was
styled as it mounted a moment before. Measured in the TUI tests on the 2-core machine of
2026-12-04, Textual's handler of that event took (median of each screen's showings,
before -> after): the run screen 41 -> 28 ms, the proposal modal 92 -> 75 ms, the new-run
form 116 -> 92 ms, the bookings 11 -> 5 ms (the rest is laying the screen out), and the
TUI tests 12 % less time. This mixin turns that restyle off for a screen's first showing
only; a screen shown again (pushed once more, or its mode switched back to) is restyled
as before. (Uncovered by a popped screen, Textual restyles none.) All TUI tests and
snapshots draw the same with it.

It relies on Textual calling each class's handler of an event, the most derived first
(the events guide, "preventing default behaviors": a base class's handler runs after the
subclass's, unless it calls `prevent_default`), and on
`ScreenResume.refresh_styles`, both public.
"""

from __future__ import annotations

from textual import events

__all__ = ["StyledOnFirstShow"]


class StyledOnFirstShow:
    """Mixin for a `Screen`, listed before it in the bases (module docstring)."""

    _shown_before = False

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler, which restyles when `refresh_styles` is set.
        if not self._shown_before:
            self._shown_before = True
            event.refresh_styles = False
