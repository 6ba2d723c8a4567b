"""Backend text is shown literally: never read as markup, control characters made visible."""

from __future__ import annotations

import pytest

from ito_tui.tui import make_app
from ito_tui.tui.screens.bookings import BookingsScreen

from .shell_fakes import NOW, FakeShellClient
from .shell_helpers import isolated_user_dirs, screen_text, settings, wait_for  # noqa: F401

pytestmark = pytest.mark.faults

HOSTILE = "[b]evil[/b]\x1b]52;c;QUJD\x07"


async def test_hostile_booking_strings_render_literally() -> None:
    client = FakeShellClient()
    first = client.booking_list[0]
    nodes = [first.nodes[0].model_copy(update={"hostname": HOSTILE}), *first.nodes[1:]]
    client.booking_list[0] = first.model_copy(
        update={"gpu_sku": "H100-[i]x[/i]", "nodes": nodes, "active_run_id": None}
    )
    app = make_app(settings(), client, clock=lambda: NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        app.screen.highlight(first.booking_id)
        await pilot.pause(0.2)
        text = screen_text(pilot)
        assert "[b]evil[/b]" in text, "markup in backend text is shown, not applied"
        assert "␛]52;c;QUJD␇" in text, "control characters are made visible"
        assert "H100-[i]x[/i]" in text
        assert "\x1b" not in text
