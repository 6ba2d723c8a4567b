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

It also shows only the keys that fit whole (`fit`, after each rebuild and resize): Textual's
footer cuts the last one at the edge (`^q Qui▏`), which reads as a broken key.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
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

    async def recompose(self) -> None:
        await super().recompose()
        self.fit()  # the new keys are mounted and styled
        self.call_after_refresh(self.fit)  # and laid out (a resize may have come between)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        """Show the keys that fit whole, in order, and hide the rest: at 80 columns the run
        screen's footer was cut mid-key (`^q Qui▏`, `x Ca▏`, `^o Bo▏`). The screen's own
        keys come first, so what goes first is the app's (Quit, Help, Runs); every key a
        screen offers stays listed in Help (F1) and the command palette."""
        for key, fits in self._fitting():
            if key.display != fits:
                key.display = fits

    @property
    def fitted(self) -> bool:
        """Whether the keys shown are those that fit the footer's width now (`fit`)."""
        return all(key.display == fits for key, fits in self._fitting())

    def _fitting(self) -> list[tuple[Widget, bool]]:
        if not self.is_attached:
            return []
        viewport = self.app.size

        def width(key: Widget) -> int:
            # Measured whether shown or laid out or not (a hidden widget has no size).
            styles = key.styles
            return key.get_content_width(viewport, viewport) + styles.gutter.width

        palette = [w for w in self.children if w.has_class("-command-palette")]
        room = self.size.width - sum(width(w) + w.styles.margin.width for w in palette)
        out = []
        for key in self.children:
            if key in palette:
                continue
            margin = key.styles.margin
            room -= margin.left + width(key)
            fits = room >= 0  # its right margin may fall past the edge
            out.append((key, fits))
            # The keys after one that does not fit stay hidden: the order is kept.
            room = room - margin.right if fits else -1
        for i in range(1, len(out)):
            (group, shown), (_label, fits) = out[i - 1], out[i]
            if shown and not fits and group.children:
                out[i - 1] = (group, False)  # a group's keys go with the words after them
        return out

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
