"""The booking picker marks a booking with an unhealthy node in its table row (glyph and
word), not only in the detail pane: the row said `ready` while the detail pane said
`✗ UNHEALTHY b200-16n-ib-12`."""

from __future__ import annotations

from textual.widgets import DataTable

from ito_tui.tui import make_app
from ito_tui.tui.screens.bookings import BookingsScreen

from .shell_fakes import NOW, FakeShellClient
from .shell_helpers import isolated_user_dirs, settings, wait_for  # noqa: F401


def status_cells(screen: BookingsScreen) -> dict[str, str]:
    table = screen.query_one(DataTable)
    return {str(key.value): str(table.get_row(key)[-1]) for key in table.rows}


async def test_a_booking_with_an_unhealthy_node_says_so_in_its_row() -> None:
    client = FakeShellClient()
    sick = {b.booking_id: sum(not n.healthy for n in b.nodes) for b in client.booking_list}
    assert sick["bk_b200_16n_ib"] == 1  # the seed's booking with node 12 down
    app = make_app(settings(backend_url="http://127.0.0.1:8741"), client, clock=lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        screen = app.screen
        assert isinstance(screen, BookingsScreen)
        cells = status_cells(screen)
        assert cells["bk_b200_16n_ib"] == "✗ 1 unhealthy"
        for booking_id, count in sick.items():
            if count == 0:
                assert "unhealthy" not in cells[booking_id], booking_id
