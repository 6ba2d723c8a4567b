"""The screen under a modal keeps drawing behind it: what changes there shows through the
modal's translucent backdrop.

Found as a flaky screenshot (scripts/screenshots_runs.py, proposal.svg): under load the run
screen's last layout and repaint, asked for while a batch update was open, stayed pending
behind the proposal modal for good, so its charts kept an earlier layout's columns.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ito_tui.tui.textual_private import ScreensWokenAfterBatch

from .shell_helpers import screen_text


class Under(Screen[None]):
    DEFAULT_CSS = "#under { width: 6; height: 1; }"

    def compose(self) -> Any:
        yield Static("before", id="under")


class Over(ModalScreen[None]):
    DEFAULT_CSS = "Over { align: center bottom; } Over > Static { width: 12; height: 1; }"

    def compose(self) -> Any:
        yield Static("the modal")


class Stacked(ScreensWokenAfterBatch[None]):
    def on_mount(self) -> None:
        self.push_screen(Under())
        self.push_screen(Over())


class PlainStacked(App[None]):
    on_mount = Stacked.on_mount


def grow(under: Static, text: str) -> None:
    """A change that needs a layout: new text, wider."""
    under.update(text)
    under.styles.width = 24


async def change_during_batch(app: App[Any]) -> str:
    """What shows of a change made under the modal while a batch update is open."""
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        under = app.screen_stack[-2].query_one("#under", Static)
        async with under.batch():  # `App.batch_update`, as Textual's own widgets use it
            grow(under, "changed while batched")
            # The screen under goes idle while the batch lasts (`pause`: until the process
            # is; then a margin for a loaded machine).
            await pilot.pause()
            await pilot.pause()
            await pilot.pause(0.2)
        await pilot.pause()
        await pilot.pause()
        return screen_text(pilot)


async def test_a_change_made_during_a_batch_update_is_drawn_once_the_batch_ends() -> None:
    assert "changed while batched" in await change_during_batch(Stacked())


async def test_textual_still_leaves_a_screen_idle_during_a_batch_undrawn() -> None:
    # What ScreensWokenAfterBatch works around (Textual 8.2.8 wakes only the app when a
    # batch ends). When this fails, Textual draws it by itself: the mixin can go.
    shown = await change_during_batch(PlainStacked())
    assert "changed while batched" not in shown
    assert "before" not in shown and "change" in shown  # the text changed, not its layout
