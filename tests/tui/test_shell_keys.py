"""Keys and the command palette: every binding is described and safe in tmux; the palette
reaches every action and jumps to any booking or run by id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr
from textual.binding import Binding
from textual.command import CommandPalette

from ito_tui.client import ItoClient
from ito_tui.contract import TrainingSpec
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.bookings import BookingsScreen, BookingTable
from ito_tui.tui.screens.capability import CapabilityScreen
from ito_tui.tui.screens.confirm_submit import ConfirmSubmitModal
from ito_tui.tui.screens.error import ErrorScreen
from ito_tui.tui.screens.help import HelpScreen
from ito_tui.tui.screens.login import LoginModal
from ito_tui.tui.screens.spec_form import SpecFormScreen

from .shell_fakes import NOW, FakeShellClient
from .shell_helpers import isolated_user_dirs, settings, wait_for  # noqa: F401

OWNED = [
    ItoApp,
    BookingsScreen,
    BookingTable,
    SpecFormScreen,
    ErrorScreen,
    CapabilityScreen,
    LoginModal,
    ConfirmSubmitModal,
    HelpScreen,
]
SWALLOWED = {"ctrl+a", "ctrl+b", "ctrl+s", "ctrl+j", "ctrl+enter"}


@pytest.mark.parametrize("owner", OWNED, ids=lambda c: c.__name__)
def test_every_binding_has_an_id_a_description_and_a_tooltip(owner: type[Any]) -> None:
    for binding in owner.BINDINGS:
        assert isinstance(binding, Binding)
        assert binding.id and binding.description and binding.tooltip, binding
        keys = {key.strip() for key in binding.key.split(",")}
        assert not keys & SWALLOWED, f"{binding.key} is swallowed by tmux or terminals"


async def test_palette_jumps_to_a_booking_by_id() -> None:
    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        bookings = app.screen
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"bk_b200_16n")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is bookings)
        await pilot.pause()
        current = bookings.current()
        assert current is not None and current.booking_id == "bk_b200_16n_ib"


async def test_palette_offers_the_screens_actions() -> None:
    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        names = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Train", "Copy ssh", "Hide unusable", "Refresh", "Help", "Reconnect"} <= names
        # Not the keys Textual's widgets bring with them (the focused table's, the screen's).
        assert not names & {"Cursor down", "Bottom", "Copy selected text", "Focus Next"}
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"copy ssh")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.clipboard.startswith("ssh "))


async def test_palette_opens_a_run_by_id(sim: Any) -> None:
    client = ItoClient(sim.url, token=SecretStr(sim.token))
    spec = TrainingSpec.model_validate(
        {
            "booking_id": "bk_h100_4n_ib",
            "model_size": "1.5B",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general-chat",
            "budget_usd": "50000",
        }
    )
    app = make_app(settings(backend_url=sim.url), client, start="bookings")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen))
        run = await client.create_run(spec, idempotency_key="k-palette")
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*run.run_id)
        await pilot.pause(0.8)
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "PipelineScreen")
        assert app.screen.run_id == run.run_id  # type: ignore[attr-defined]  # a PipelineScreen


async def test_retry_on_the_error_screen_reconnects_once_the_backend_answers() -> None:
    from ito_tui.client import BackendUnavailable

    client = FakeShellClient(fail_with=BackendUnavailable("Backend unreachable: refused"))
    app = make_app(settings(), client, clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen))
        client.fail_with = None
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        assert app.session.connection == "live"


@pytest.mark.parametrize(("mode", "demo"), [("simulated", True), ("production", False)])
async def test_demo_badge_only_for_a_simulated_backend(mode: str, demo: bool) -> None:
    from ito_tui.tui.widgets.header import HeaderStrip

    from .shell_fakes import capabilities

    app = make_app(settings(), FakeShellClient(caps=capabilities(mode=mode)), clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen))
        assert app.screen.query_one(HeaderStrip).demo is demo


async def test_enter_right_after_arrow_keys_trains_on_the_row_the_cursor_ends_on() -> None:
    """Keys that arrive in one burst (a paste, a slow ssh link) are handled in order: Enter
    is a priority binding, checked before the table has moved its cursor for the arrows."""
    from textual import events

    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        bookings = app.screen
        assert isinstance(bookings, BookingsScreen)
        first = bookings.current()
        for key in ("down", "down", "enter"):  # posted at once, as a terminal delivers them
            app.post_message(events.Key(key, None))
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen))
        chosen = bookings.current()
        assert first is not None and chosen is not None and chosen != first
        assert app.screen.booking.booking_id == chosen.booking_id  # type: ignore[attr-defined]


FIELDS = ("model_size", "data_ref", "budget_usd")


async def burst_into_spec_form(
    keys: list[str], until: Callable[[dict[str, str]], bool]
) -> tuple[dict[str, str], str | None]:
    """Open the spec form, empty its model size, data and budget fields and focus the
    first, then post `keys` at once, as a pty delivers a paste or a slow link's packet.
    Returns the fields' values and the focused widget's id once `until(values)` holds."""
    from textual import events
    from textual.widgets import Input

    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen))
        form = app.screen
        inputs = {name: form.query_one(f"#f-{name}", Input) for name in FIELDS}
        for field in inputs.values():
            field.value = ""
        inputs["model_size"].focus()
        await pilot.pause()
        for key in keys:
            app.post_message(events.Key(key, key if len(key) == 1 else None))

        def values() -> dict[str, str]:
            return {name: field.value for name, field in inputs.items()}

        await wait_for(pilot, lambda: until(values()))
        await pilot.pause()
        return values(), app.focused.id if app.focused else None


async def test_keys_typed_right_after_tab_go_to_the_next_field() -> None:
    """Tab moves focus as the key arrives: in one burst, what follows it is typed into
    the next field, not into the one just left. A field Tab enters has its text
    selected, so typing replaces it: back in the model size, `x` replaces `1B`, and
    `end` first keeps it."""
    got = await burst_into_spec_form(
        ["1", "B", "tab", "h", "f", "shift+tab", "x", "tab", "end", "s"],
        until=lambda v: v["data_ref"] == "hfs",
    )
    assert got == ({"model_size": "x", "data_ref": "hfs", "budget_usd": ""}, "f-data_ref")


async def test_editing_keys_in_a_burst_act_in_the_order_typed() -> None:
    """An Input's own bindings (backspace, arrows) run when the key reaches it, not after
    the keys behind it (Textual runs them once the key has bubbled up to the app)."""
    got = await burst_into_spec_form(
        ["8", "X", "backspace", "B", "tab", "h", "f", "left", "left", "s", "end", "x"],
        until=lambda v: v["data_ref"].endswith("x"),
    )
    assert got == ({"model_size": "8B", "data_ref": "shfx", "budget_usd": ""}, "f-data_ref")


async def test_keys_typed_after_tabbing_past_two_selects_reach_the_field_after_them() -> None:
    """A Select takes no digits: in `⇥⇥⇥20000` typed from the data field, the Tabs move
    the focus over both Selects to the budget before the digits are sent on (they were
    sent to the first Select, which dropped them)."""
    got = await burst_into_spec_form(
        ["1", "B", "tab", "h", "f", "tab", "tab", "tab", "2", "0", "0", "0", "0"],
        until=lambda v: len(v["budget_usd"]) >= 5,
    )
    assert got == ({"model_size": "1B", "data_ref": "hf", "budget_usd": "20000"}, "f-budget_usd")


async def test_a_table_key_before_tab_in_a_burst_still_moves_the_table() -> None:
    """Tab is not handled ahead of the keys before it: the arrow bubbles to the app and
    moves the table's cursor before the Tab moves the focus (a priority Tab, tried, sent
    the arrow to the next widget instead)."""
    from textual import events

    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        table = app.screen.query_one(BookingTable)
        assert app.focused is table
        row = table.cursor_row
        for key in ("down", "tab"):  # at once, as a pty delivers them
            app.post_message(events.Key(key, None))
        await wait_for(pilot, lambda: app.focused is not table)
        await pilot.pause()
        assert table.cursor_row == row + 1


def test_palette_says_which_runs_wait_for_a_decision() -> None:
    from ito_tui.tui.commands import run_line

    from .pipeline_fakes import summary

    waiting = summary("run_7f3a9c", "awaiting_approval", "pretrain", 0.4, "85.00", pending=1)
    running = summary("run_5b21e0", "running", "sft", 0.7, "90.00")
    assert run_line(waiting).endswith("· NEEDS APPROVAL")
    assert "APPROVAL" not in run_line(running)
