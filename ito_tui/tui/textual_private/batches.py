"""A screen's repaint asked for during a batch update is not lost (`textual_private`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from textual.app import App

ReturnType = TypeVar("ReturnType")


class ScreensWokenAfterBatch(App[ReturnType]):
    """An App that wakes every screen in its stack when a batch update ends.

    A screen lays out and repaints its dirty widgets when it goes idle, unless a batch
    update is open (`App.batch_update`, which Textual's own widgets use: `Widget.batch`,
    the content switcher); and a batch that ends wakes the app only. A screen that went
    idle during the batch then keeps its layout and repaint pending until something else
    wakes it: under a loaded machine the run screen's last chart repaint stayed undrawn
    behind the proposal modal for good (a paused run sends nothing more to wake it).
    Public API only (`batch_update`, `check_idle`); the behaviour it works around is
    Textual's (tests/tui/test_backdrop.py fails once Textual no longer has it).
    """

    @contextmanager
    def batch_update(self) -> Iterator[None]:
        with super().batch_update():
            yield
        # Waking a screen with nothing to do costs one idle check; within an outer
        # batch it is skipped again, and the outer batch's end wakes it once more.
        for screen in self.screen_stack:
            screen.check_idle()
