"""The fault tests compose every frame a terminal would be sent (tests/conftest.py), not only
what a test reads: a hostile value that a frame cannot draw fails the test even when no
assertion reads that frame."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.widgets import Static


class Fragile(Static):
    """Cannot draw `nan`: stands in for a widget with a bug on a hostile value."""

    def render(self) -> Any:
        shown = super().render()
        if "nan" in str(shown):
            raise ValueError("a frame that cannot be drawn")
        return shown


async def test_a_frame_no_assertion_reads_is_still_drawn_and_its_failure_fails() -> None:
    fragile = Fragile("1.0")

    class One(App[None]):
        CSS = "Fragile { width: 10; height: 1; }"  # no layout asks it for its size

        def compose(self) -> Any:
            yield fragile

    with pytest.raises(ValueError, match="cannot be drawn"):
        async with One().run_test() as pilot:
            await pilot.pause()
            fragile.update("nan")  # drawn only if frames are composed
            await pilot.pause()
            await pilot.pause()
            fragile.update("2.0")  # what a test would read: fine
            await pilot.pause()
