"""Snapshots of the shell's screens: deterministic data (simulator seed and planner, frozen
clock, no cursor blink), at 80×24 and 120×40, and the booking picker in every shipped theme."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from ito_tui.client import BackendUnavailable
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.capability import CapabilityScreen
from ito_tui.tui.screens.error import ErrorScreen
from ito_tui.tui.screens.help import HelpScreen
from ito_tui.tui.screens.login import LoginModal
from ito_tui.tui.screens.spec_form import SpecFormScreen
from ito_tui.tui.widgets.estimate import EstimatePanel
from tests.support.apps import SIZE_IDS, SIZES, THEMES

from .shell_fakes import NOW, FakeShellClient, capabilities
from .shell_helpers import isolated_user_dirs, settings, wait_for  # noqa: F401

RunBefore = Callable[[Pilot[Any]], Awaitable[None]]


def shell_app(client: FakeShellClient, *, theme: str = "ito-dark") -> ItoApp:
    return make_app(
        settings(backend_url="http://127.0.0.1:8741", theme=theme), client, clock=lambda: NOW
    )


def until(predicate: Callable[[ItoApp], object]) -> RunBefore:
    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, lambda: predicate(pilot.app))
        await pilot.pause(0.2)

    return run_before


def picker_loaded(app: ItoApp) -> bool:
    return isinstance(app.screen, BookingsScreen) and app.screen.loaded


def open_form(booking_id: str, **values: str) -> RunBefore:
    """Pick `booking_id`, fill the form with `values`, wait for the estimate."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: picker_loaded(app))
        app.screen.highlight(booking_id)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen))
        form = app.screen
        for name, text in values.items():
            form.query_one(f"#f-{name}", Input).value = text
        form.query_one("#f-model_size", Input).focus()
        panel = form.query_one(EstimatePanel)
        await wait_for(
            pilot,
            lambda: (
                panel.estimate is not None and not panel.stale and form.estimated_spec == form.spec
            ),
        )
        await pilot.pause(0.2)

    return run_before


VALID = {"data_ref": "catalog://fineweb-edu@1.3", "budget_usd": "25,000"}


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_booking_picker_loaded(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the DEMO header with alice and `live`, the bookings table with the five
    completed bookings first (ready; bk_b200_16n_ib's row says `✗ 1 unhealthy` in red) and
    the pending, expired and cancelled ones dimmed with
    their status, the summary "5 of 8 bookings can take a run", and the detail pane of the
    highlighted booking: GPUs, fabric, window, price, every node with health and the SSH
    user, port, jump host, host-key fingerprints and head-node command; beside the table at
    120×40, under it at 80×24."""
    assert snap_compare(
        shell_app(FakeShellClient()), terminal_size=size, run_before=until(picker_loaded)
    )


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_no_completed_bookings(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see "0 of 3 bookings can take a run", the notice that a completed booking
    from ito-compute is needed and that this app never books, reserves or buys, and only the
    dimmed pending, expired and cancelled bookings; the footer offers no Train key."""
    client = FakeShellClient()
    client.booking_list = [b for b in client.booking_list if str(b.status) != "completed"]
    assert snap_compare(shell_app(client), terminal_size=size, run_before=until(picker_loaded))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_spec_form_valid_with_estimate(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the spec form for bk_h100_4n_ib (8B, catalog data, general-chat,
    $25,000) with no field errors and an enabled Submit button, and the estimate panel:
    "Pre-flight passed", the plan (dp × shard, tp/pp/cp, precision, activation
    checkpointing, fault tolerance), memory per GPU against HBM as a bar, tokens/s/GPU,
    MFU, wall clock and cost p50/p90 with bars against the booking window and the budget."""
    app = shell_app(FakeShellClient())
    assert snap_compare(app, terminal_size=size, run_before=open_form("bk_h100_4n_ib", **VALID))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_spec_form_refused(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see 405B on the one-node H100 booking refused: the model size field says
    why (it does not fit) next to it, the estimate panel starts with "Refused: cannot be
    submitted" and the refusal's reason and suggestion, and the Submit button is disabled."""
    app = shell_app(FakeShellClient())
    run_before = open_form("bk_h100_1n", model_size="405B", **VALID)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_login_modal(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the login modal over the connecting screen: "Log in to
    127.0.0.1:8741", the masked, empty token field, where the token is kept, and the
    Log in and Cancel buttons."""
    app = shell_app(FakeShellClient(operator=None))
    assert snap_compare(
        app, terminal_size=size, run_before=until(lambda a: isinstance(a.screen, LoginModal))
    )


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_connection_error(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see "Backend unreachable" with the backend URL and the reason, the note
    that ito-tui never falls back to a simulated backend, Retry and Quit buttons, `offline`
    in the header and no DEMO badge."""
    failure = BackendUnavailable("Backend unreachable: GET /v1/capabilities failed (refused)")
    app = shell_app(FakeShellClient(fail_with=failure))
    assert snap_compare(
        app, terminal_size=size, run_before=until(lambda a: isinstance(a.screen, ErrorScreen))
    )


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_missing_capability(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see "Missing capability: runs.create" after choosing a booking on a
    scaffold backend, the sentence that the backend does not provide it yet so starting a
    training run is not possible, the backend's own detail, that there is no way around it,
    and only Back and Quit."""
    client = FakeShellClient(caps=capabilities(mode="scaffold", missing=("runs.create",)))

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, lambda: picker_loaded(pilot.app))
        pilot.app.screen.highlight("bk_h100_4n_ib")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CapabilityScreen))
        await pilot.pause(0.2)

    assert snap_compare(shell_app(client), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_help_screen(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the help over the booking picker: its keys (Enter to train, c to copy
    the ssh command, h to hide unusable bookings, r to refresh) with their tooltips, then the
    app's (quit, help, reconnect, palette), and the note that ctrl+p reaches every action."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, lambda: picker_loaded(pilot.app))
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        await pilot.pause(0.2)

    assert snap_compare(shell_app(FakeShellClient()), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
def test_booking_picker_in_each_theme(snap_compare: Any, theme: str) -> None:
    """You should see the loaded booking picker at 80×24 in the given shipped theme: the
    header with DEMO, usable bookings in full colour, unusable ones dimmed, health ticks in
    the theme's gate-passed colour."""
    app = shell_app(FakeShellClient(), theme=theme)
    assert snap_compare(app, terminal_size=(80, 24), run_before=until(picker_loaded))
