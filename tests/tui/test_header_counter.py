"""The header's "needs you" counter: glyph and words, the nearest expiry, never cut."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult

from ito_tui.tui.widgets.header import HeaderStrip, needs_you_text


def test_the_counter_reads_as_words_with_the_time_left() -> None:
    assert needs_you_text(1, 161.0) == "⚠ 1 needs you · 2m41s"
    assert needs_you_text(2, 3725.0) == "⚠ 2 need you · 1h02m"
    assert needs_you_text(3, None) == "⚠ 3 need you"  # no expiry known
    assert needs_you_text(1, -4.0) == "⚠ 1 needs you · 0s"  # due: never a negative time


class HeaderApp(App[None]):
    """One header of a run screen; `connection` and `read_only` as the test needs."""

    def __init__(self, connection: str = "reconnecting in 3 s · 4 reconnects", **kw: Any) -> None:
        super().__init__()
        self.header_args: dict[str, Any] = {
            "backend_host": "ito-backend.example.internal:8741",
            "operator": "alice",
            "connection": connection,
            "demo": True,
            "read_only": True,
            "title": "run_7f3a9c",
            **kw,
        }

    def compose(self) -> ComposeResult:
        yield HeaderStrip(**self.header_args)


@pytest.mark.parametrize("width", [80, 60])
async def test_the_counter_and_the_badges_are_never_cut(width: int) -> None:
    app = HeaderApp()
    async with app.run_test(size=(width, 5)) as pilot:
        header = app.query_one(HeaderStrip)
        header.needs_you, header.needs_you_left_s = 2, 161.0
        await pilot.pause()
        line = header.render()
        text = str(line)
        assert line.cell_length <= width
        # The rest of the line gives way; what needs you, READ-ONLY and DEMO stay whole.
        assert text.endswith("⚠ 2 need you · 2m41s  READ-ONLY   DEMO "), text
        assert "…" in text  # the host and connection were cut, not the counter
        header.needs_you, header.needs_you_left_s = 0, None
        await pilot.pause()
        assert "need" not in str(header.render())


async def test_the_host_gives_way_before_the_run_id_and_the_connection() -> None:
    app = HeaderApp("live", read_only=False, title="run_7f3a9c0d12ab")
    async with app.run_test(size=(80, 5)) as pilot:
        header = app.query_one(HeaderStrip)
        header.needs_you, header.needs_you_left_s = 1, 161.0
        await pilot.pause()
        text = str(header.render())
        # The host goes first; the run id, the operator and `● live` stay whole, uncut.
        assert "ito-backend" not in text and "…" not in text, text
        assert "run_7f3a9c0d12ab · alice · ● live" in text and text.endswith("DEMO "), text
        await pilot.resize_terminal(120, 5)
        await pilot.pause()
        assert "ito-backend.example.internal:8741 · alice · ● live" in str(header.render())
