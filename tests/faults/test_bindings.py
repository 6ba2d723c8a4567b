"""No key, keymap entry or palette command approves a proposal or passes a failed gate."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.screen import Screen

import ito_tui.tui.screens as screens_pkg
from ito_tui.tui.app import ItoApp
from ito_tui.tui.screens.proposal import ProposalModal
from tests.tui.pipeline_live import live_app, pipeline_of, start_run, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]
DECIDING = re.compile(r"approv|reject|confirm|overrid|continu|resum|proceed|force|skip_gate", re.I)


def every_binding() -> list[tuple[str, Binding]]:
    found: list[tuple[str, Binding]] = [("ItoApp", b) for b in ItoApp.BINDINGS]  # type: ignore[misc]
    for info in pkgutil.iter_modules(screens_pkg.__path__):
        module = importlib.import_module(f"{screens_pkg.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__ == module.__name__:
                found += [(name, b) for b in cls.BINDINGS if isinstance(b, Binding)]
    return found


def test_no_binding_anywhere_is_a_decision() -> None:
    bindings = every_binding()
    assert len(bindings) > 15
    for owner, binding in bindings:
        assert not DECIDING.search(binding.action), (owner, binding)
        # A keymap entry can only move a binding id to other keys, never change its action.
        assert binding.id, (owner, binding)


@pytest.mark.long(seconds=14)
async def test_every_key_and_command_on_a_pending_proposal_sends_nothing(
    sim_factory: Any, tmp_path: Path
) -> None:
    sim = sim_factory(scenario="loss-spike", speed=300_000.0, approval_speed=5.0)
    run_id = await start_run(sim.url, "loss-spike")
    app, client = live_app(sim.url, run_id, tmp_path)
    sent: list[str] = []

    async def refuse(*a: Any, **kw: Any) -> Any:
        sent.append(repr(a))
        raise AssertionError("a decision was sent without the typed second step")

    # Rejecting is one deliberate press (the run simply goes on); approving never is.
    client.approve = refuse  # type: ignore[method-assign]
    keys = sorted(
        {
            key.strip()
            for _, b in every_binding()
            for key in b.key.split(",")
            if b.action not in ("quit",) and key.strip() not in ("ctrl+q",)
        }
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal), 60, "the modal")
        screen = pipeline_of(app)
        for key in [*keys, "enter", "space", "escape"]:
            if not isinstance(app.screen, ProposalModal):
                screen.open_proposal()
                await pilot.pause(0.1)
            await pilot.press(key)
            await pilot.pause(0.05)
        commands = []
        for target in (screen, app.screen):
            commands += [c for c in app.get_system_commands(target) if c.title != "Quit"]
        for command in commands:
            if command.title in ("Log in", "Reconnect", "Bookings", "Runs"):
                # They leave the run (a run opened at start-up is closed when left, so the
                # run screen's own commands gathered above would act on a closed screen);
                # they are checked to exist, not to decide.
                continue
            result = command.callback()
            if inspect.isawaitable(result):
                await result
            await pilot.pause(0.05)
        assert app.is_running
        assert sent == []
        proposals = await client.proposals(run_id)
        assert proposals and all(p.decided_by is None for p in proposals), proposals
