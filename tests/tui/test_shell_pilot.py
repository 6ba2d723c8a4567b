"""Pilot tests of the shell against a real simulated backend on 127.0.0.1.

They assert behaviour and what the backend received (runs created, tokens
stored), not pixels.
"""

from __future__ import annotations

import socket
import subprocess
from functools import partial
from typing import Any

import pytest
from pydantic import SecretStr
from textual.widgets import Button, Collapsible, DataTable, Input

from ito_tui import auth
from ito_tui.client import ItoClient, RetryPolicy
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens import spec_form
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.capability import CapabilityScreen
from ito_tui.tui.screens.confirm_submit import ConfirmSubmitModal
from ito_tui.tui.screens.error import ErrorScreen
from ito_tui.tui.screens.login import LoginModal
from ito_tui.tui.screens.spec_form import SpecFormScreen
from ito_tui.tui.session import TokenCell
from ito_tui.tui.widgets.estimate import EstimatePanel
from ito_tui.tui.widgets.field_row import FieldRow
from ito_tui.tui.widgets.header import HeaderStrip
from tests.support.apps import bottom_row_keys
from tests.support.keyring import MemoryKeyring
from tests.support.toasts import record_toasts

from .shell_helpers import (
    isolated_user_dirs,  # noqa: F401  (autouse fixture)
    screen_text,
    settings,
    wait_for,
)

SIZE = (100, 32)


def client_for(url: str, token: Any) -> ItoClient:
    return ItoClient(url, token=token, retry=RetryPolicy(max_attempts=1, backoff_base_s=0.01))


def app_for(sim: Any, *, read_only: bool = False) -> tuple[ItoApp, ItoClient]:
    client = client_for(sim.url, SecretStr(sim.token))
    app = make_app(settings(backend_url=sim.url), client, read_only=read_only)
    return app, client


async def open_booking(pilot: Any, booking_id: str) -> SpecFormScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
    screen = app.screen
    screen.highlight(booking_id)
    await pilot.pause()
    assert screen.current().booking_id == booking_id
    await pilot.press("enter")
    await wait_for(pilot, lambda: not isinstance(app.screen, BookingsScreen), what="next screen")
    return app.screen  # type: ignore[no-any-return]  # pilot.app is typed App[Any]


async def fill(pilot: Any, form: SpecFormScreen, **values: str) -> None:
    """Put each value in its field; the last key is typed, as a person would finish."""
    for name, text in values.items():
        field = form.query_one(f"#f-{name}", Input)
        field.focus()
        await pilot.pause()  # focused: the field selects its text, as Tab would
        field.value = text[:-1]
        field.cursor_position = len(field.value)
        await pilot.press(text[-1])
    await pilot.pause()


async def fresh_estimate(pilot: Any, form: SpecFormScreen) -> EstimatePanel:
    panel = form.query_one(EstimatePanel)
    await wait_for(
        pilot,
        lambda: panel.estimate is not None and not panel.stale and form.estimated_spec == form.spec,
        what=lambda: (
            f"a fresh estimate; estimate {panel.estimate is not None}, stale {panel.stale}, "
            f"error {panel.error!r}, workers {[(w.group, w.state.name) for w in form.workers]}, "
            f"estimated {form.estimated_spec!r}, the form's {form.spec!r}"
        ),
    )
    return panel


@pytest.mark.faults
async def test_login_flow_keeps_the_token_in_the_keyring_only(
    sim: Any,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cell = TokenCell(
        loader=partial(auth.get_token, sim.url), saver=partial(auth.store_token, sim.url)
    )
    client = client_for(sim.url, cell)
    app = make_app(settings(backend_url=sim.url), client, token=cell)
    toasts = record_toasts(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LoginModal), what="login modal")
        field = app.screen.query_one("#login-token", Input)
        assert field.password, "the token field must be masked"

        await pilot.press(*"wrong-token", "enter")
        await wait_for(pilot, lambda: "rejected" in screen_text(pilot), what="rejection")
        assert isinstance(app.screen, LoginModal)
        assert memory_keyring.store == {}

        await pilot.press(*sim.token, "enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded,
            what="bookings",
        )
        assert memory_keyring.store == {("ito-tui", auth.account_for(sim.url)): sim.token}
        header = app.screen.query_one(HeaderStrip)
        assert header.operator == sim.operator and header.demo
        shown = screen_text(pilot) + " ".join(toasts)
        assert sim.token not in shown and "wrong-token" not in shown


async def test_unreachable_backend_shows_the_error_and_starts_no_simulator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[object] = []
    real_popen = subprocess.Popen

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(args)
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    client = client_for(url, SecretStr("s3cret"))
    app = make_app(settings(backend_url=url), client)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), what="error screen")
        text = screen_text(pilot)
        assert "Backend unreachable" in text
        assert "never falls back" in text
        assert app.screen.query_one(HeaderStrip).connection == "offline"
        assert not app.session.demo
    assert started == []


async def test_scaffold_backend_names_the_missing_runs_create(sim_factory: Any) -> None:
    sim = sim_factory(mode="scaffold")
    app, client = app_for(sim)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_booking(pilot, "bk_h100_4n_ib")
        assert isinstance(screen, CapabilityScreen)
        assert screen.capability == "runs.create"
        assert "runs.create" in screen_text(pilot)
        actions = {b.binding.action for b in screen.active_bindings.values()}
        assert not actions & {"train", "submit"}, "no way around a missing capability"
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen))
        assert await client.runs() == []


async def test_estimate_refusal_blocks_submit_and_a_double_submit_creates_one_run(
    sim_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A slow pre-flight keeps the first POST in flight while the second press lands.
    sim = sim_factory(preflight_delay_s=0.5)
    app, client = app_for(sim)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_booking(pilot, "bk_h100_1n")
        assert isinstance(form, SpecFormScreen)
        await fill(
            pilot,
            form,
            model_size="405B",
            data_ref="catalog://fineweb-edu@1.3",
            budget_usd="50,000",
        )
        panel = await fresh_estimate(pilot, form)
        assert panel.estimate is not None and panel.estimate.refused
        assert form.query_one("#spec-submit", Button).disabled
        assert form.query_one("#row-model_size", FieldRow).error, "refusal lands on the field"
        await pilot.press("ctrl+g")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, ConfirmSubmitModal)

        # A long debounce holds the new request back, so the stale state can be seen.
        monkeypatch.setattr(spec_form, "DEBOUNCE_S", 1.5)
        await fill(pilot, form, model_size="1.5B")
        assert form.query_one(EstimatePanel).stale, "the old estimate is marked stale"
        assert form.query_one("#spec-submit", Button).disabled
        panel = await fresh_estimate(pilot, form)
        assert panel.estimate is not None and not panel.estimate.refused
        assert not form.query_one("#spec-submit", Button).disabled
        # The stage column is 12 cells wide and holds labels with spaces (`data prep`).
        drawn = panel.render().plain.splitlines()
        rows = {line[:12].strip(): line[12:].split() for line in drawn}
        # Stages that train on no tokens show none ("0" read like a fault), then time, cost.
        assert rows["data prep"][0] == "—" and rows["pretrain"][0].endswith("B")

        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmSubmitModal), what="confirm")
        # Its own keys at the bottom, not the form's (which do nothing while it is open).
        assert bottom_row_keys(app) == ["esc Cancel"]
        await pilot.press("enter")
        await pilot.press("ctrl+g", "enter")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, SpecFormScreen | ConfirmSubmitModal)
        )
        runs = await client.runs()
        assert len(runs) == 1
        assert runs[0].booking_id == "bk_h100_1n" and runs[0].model_size == "1.5B"


async def test_invalid_fields_say_why_as_you_type(sim: Any) -> None:
    app, _client = app_for(sim)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_booking(pilot, "bk_h100_4n_ib")
        assert isinstance(form, SpecFormScreen)
        await fill(pilot, form, model_size="8X", data_ref="ftp://x", budget_usd="-5")
        assert "M or B" in form.query_one("#row-model_size", FieldRow).error
        assert "Scheme" in form.query_one("#row-data_ref", FieldRow).error
        assert "more than $0" in form.query_one("#row-budget_usd", FieldRow).error
        assert form.query_one("#spec-submit", Button).disabled
        await fill(pilot, form, budget_usd="99,000,000")
        assert "at most" in form.query_one("#row-budget_usd", FieldRow).error


async def test_submit_on_an_unfilled_form_says_which_fields_and_marks_them(
    sim: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+G before the form is complete is not a silent no-op: it names what to fix."""
    app, client = app_for(sim)
    toasts = record_toasts(app, monkeypatch, severities={"warning"})
    async with app.run_test(size=SIZE) as pilot:
        form = await open_booking(pilot, "bk_h100_4n_ib")
        assert isinstance(form, SpecFormScreen)
        assert "submit" in {b.binding.action for b in form.active_bindings.values()}
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: bool(toasts), what="a notice")
        assert toasts == ["Not ready to submit: check Data, Budget USD."]
        assert form.query_one("#row-data_ref", FieldRow).error
        assert form.query_one("#row-budget_usd", FieldRow).error
        assert not form.query_one("#row-model_size", FieldRow).error
        assert app.screen is form and await client.runs() == []
        # The first field to fix has the keys; fixing it leaves the next one's error shown.
        assert form.focused is form.query_one("#f-data_ref", Input)
        await pilot.press(*"catalog://fineweb-edu@1.3")
        await wait_for(pilot, lambda: not form.query_one("#row-data_ref", FieldRow).error)
        assert form.query_one("#row-budget_usd", FieldRow).error
        # A field to fix under Advanced: it opens, and the field has the keys.
        await fill(pilot, form, budget_usd="30000")
        form.query_one("#f-seq_len", Input).value = "0"  # behind the closed Advanced
        assert form.query_one("#spec-advanced", Collapsible).collapsed
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: form.focused is form.query_one("#f-seq_len", Input))
        assert not form.query_one("#spec-advanced", Collapsible).collapsed


async def test_read_only_refuses_submit(sim: Any) -> None:
    app, client = app_for(sim, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        bookings = app.screen
        bookings.highlight("bk_h100_4n_ib")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.screen is bookings, "read-only never opens the spec form from the picker"
        assert "train" not in {b.binding.action for b in bookings.active_bindings.values()}

        # Even a spec form reached some other way offers and performs no submit.
        booking = next(b for b in await client.bookings() if b.booking_id == "bk_h100_4n_ib")
        form = SpecFormScreen(booking)
        await app.push_screen(form)
        await fill(pilot, form, data_ref="catalog://fineweb-edu@1.3", budget_usd="50000")
        await fresh_estimate(pilot, form)
        assert not form.query_one("#spec-submit", Button).display
        screen_actions = {b.binding.action for b in form.active_bindings.values() if b.node is form}
        assert "submit" not in screen_actions
        await pilot.press("ctrl+g")
        form.action_submit()
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ConfirmSubmitModal)
        assert await client.runs() == []


async def test_booking_picker_lists_usable_bookings_first_and_hides_the_rest(sim: Any) -> None:
    app, _client = app_for(sim)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        screen = app.screen
        table = screen.query_one(DataTable)
        statuses = [str(b.status) for b in screen.bookings]
        assert statuses.index("pending") > max(
            i for i, s in enumerate(statuses) if s == "completed"
        )
        column = [str(c.label) for c in table.columns.values()].index("Ends in")
        ends_in = {str(b.status): str(table.get_row(b.booking_id)[column]) for b in screen.bookings}
        # Time left for a live booking; nothing for a cancelled one (it read "4d 23h").
        assert ends_in["expired"] == "ended" and ends_in["cancelled"] == "—"
        assert ends_in["completed"].endswith("h")
        total = table.row_count
        await pilot.press("h")
        assert table.row_count == total - 3
        await pilot.press("c")
        assert app.clipboard.startswith("ssh ")


async def test_start_screen_is_the_runs_list_when_runs_are_active_and_ctrl_r_reaches_it(
    sim_factory: Any,
) -> None:
    sim = sim_factory(speed=1.0)
    app, client = app_for(sim)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen), what="picker")
        # No runs yet: the picker is the start, and ctrl+r opens the list over it.
        await wait_for(pilot, lambda: app.session.operator is not None, what="connected")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "No runs on this backend yet" in screen_text(pilot))
        assert type(app.screen).__name__ == "RunsScreen" and len(app.screen_stack) == 2
        await pilot.press("escape")
        assert isinstance(app.screen, BookingsScreen)
        booking = next(b for b in await client.bookings() if b.booking_id == "bk_h100_4n_ib")
        form = SpecFormScreen(booking)
        spec_values = {"data_ref": "catalog://fineweb-edu@1.3", "budget_usd": "50000"}
        await app.push_screen(form)
        await fill(pilot, form, **spec_values)
        await fresh_estimate(pilot, form)
        assert form.spec is not None
        await client.create_run(form.spec, idempotency_key="k-start")

    second, _ = app_for(sim)
    async with second.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: type(second.screen).__name__ == "RunsScreen", what="runs list"
        )
        start = second.screen
        await wait_for(pilot, lambda: "1 of 1 runs" in screen_text(pilot), what="the run")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(second.screen).__name__ == "PipelineScreen")
        await pilot.press("ctrl+o")
        assert isinstance(second.screen, BookingsScreen)
        # Back to the list the app started on (the run's screen above it closed), not a copy.
        await pilot.press("ctrl+r")
        assert second.screen is start and len(second.screen_stack) == 1
        assert "esc Back" not in screen_text(pilot)  # nothing under it to go back to


@pytest.mark.parametrize("read_only", [False, True])
async def test_enter_on_a_busy_booking_opens_the_run_that_holds_it(
    sim_factory: Any, read_only: bool
) -> None:
    from ito_tui.contract import TrainingSpec

    sim = sim_factory(speed=1.0)
    spec = TrainingSpec.model_validate(
        {
            "booking_id": "bk_h100_4n_ib",
            "model_size": "1.5B",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general-chat",
            "budget_usd": "50000",
        }
    )
    async with client_for(sim.url, SecretStr(sim.token)) as setup:
        run = await setup.create_run(spec, idempotency_key="k-busy")
    client = client_for(sim.url, SecretStr(sim.token))
    app = make_app(settings(backend_url=sim.url), client, start="bookings", read_only=read_only)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        app.screen.highlight("bk_h100_4n_ib")
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "PipelineScreen")
        assert app.screen.run_id == run.run_id  # type: ignore[attr-defined]  # a PipelineScreen
        await pilot.pause(0.2)
        assert app.screen.query_one(HeaderStrip).read_only is read_only
        assert ("READ-ONLY" in screen_text(pilot)) is read_only
