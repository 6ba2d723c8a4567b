"""The decision trail against a real desk_sim on 127.0.0.1: two operators decide two
proposals on two runs, and the Decisions screen, its filters and its modal agree with what
desk_sim recorded; the palette and the screen reach pending proposals of any run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from textual.command import CommandPalette
from textual.widgets import Button, Static

from ito_tui.client import ItoClient
from ito_tui.contract import Proposal
from ito_tui.format import when
from ito_tui.tui.screens.decisions import DecisionsScreen
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.widgets.decision_table import DecisionTable, stamp
from ito_tui.tui.widgets.loss_window import LossWindow

from .pipeline_live import APPROVAL_SPEED, live_app, start_run, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

pytestmark = pytest.mark.slow
SPEED = 300_000.0
ALICE, BOB = "s3cret", "hunter2"  # the simulator's test tokens (tests/conftest.py)


def as_operator(url: str, token: str) -> ItoClient:
    return ItoClient(url, token=SecretStr(token))


async def pending_of(url: str, run_id: str) -> Proposal:
    """The run's pending proposal, once its loss spike has asked for one."""
    async with as_operator(url, ALICE) as client:
        for _ in range(600):
            pending = await client.proposals(run_id, status="pending")
            if pending:
                return pending[0]
            await asyncio.sleep(0.1)
    raise AssertionError(f"{run_id} asked for no proposal")


async def until_ended(url: str, *run_ids: str) -> None:
    """Wait for the runs' ends: after that, desk_sim's trail no longer changes."""
    async with as_operator(url, ALICE) as client:
        for _ in range(600):
            runs = [await client.run(r) for r in run_ids]
            if all(run.terminal for run in runs):
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"{run_ids} did not end")


async def recorded(url: str, **filters: Any) -> list[str]:
    """What desk_sim answers `GET /v1/proposals` with: proposal ids, newest first."""
    async with as_operator(url, ALICE) as client:
        return [p.proposal_id for p in await client.all_proposals(**filters)]


async def two_runs_asking(sim_factory: Callable[..., Any]) -> tuple[Any, Proposal, Proposal]:
    sim = sim_factory(scenario="loss-spike", speed=SPEED, approval_speed=APPROVAL_SPEED)
    run_a = await start_run(sim.url, "loss-spike")
    run_b = await start_run(sim.url, "loss-spike")
    return sim, await pending_of(sim.url, run_a), await pending_of(sim.url, run_b)


async def open_decisions(pilot: Any) -> DecisionsScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(app.screen, DecisionsScreen) and app.screen.fetches)
    return app.screen  # type: ignore[no-any-return]  # pilot.app is App[Any]


def shown(screen: DecisionsScreen) -> list[str]:
    return [str(key.value) for key in screen.query_one(DecisionTable).rows]


def cell(screen: DecisionsScreen, proposal_id: str, column: str) -> str:
    return str(screen.query_one(DecisionTable).get_cell(proposal_id, column))


async def test_two_operators_on_two_runs_the_trail_shows_who_decided_when(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim, prop_a, prop_b = await two_runs_asking(sim_factory)
    async with as_operator(sim.url, ALICE) as alice, as_operator(sim.url, BOB) as bob:
        await alice.approve(prop_a.proposal_id, comment="roll back, as last week")
        await bob.reject(prop_b.proposal_id, comment="bad shard [bold]x[/] \x1b[31m")
    await until_ended(sim.url, prop_a.run_id, prop_b.run_id)
    async with as_operator(sim.url, ALICE) as client:
        trail = {p.proposal_id: p for p in await client.all_proposals()}
    app, _client = live_app(sim.url, "runs", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decisions(pilot)
        assert shown(screen) == await recorded(sim.url)  # every proposal, newest first
        for pid, who in ((prop_a.proposal_id, "alice"), (prop_b.proposal_id, "bob")):
            assert trail[pid].decided_by == who
            assert cell(screen, pid, "by") == who
            assert cell(screen, pid, "decided UTC") == stamp(trail[pid].decided_at)
            assert cell(screen, pid, "status") == str(trail[pid].status)
        assert cell(screen, prop_b.proposal_id, "comment") == "bad shard [bold]x[/] ␛[31m"

        # Each status the filter cycles through narrows to what desk_sim answers for it.
        for status in ("pending", "approved", "rejected", "expired"):
            await pilot.press("s")
            assert screen.status_filter == status
            expected = await recorded(sim.url, status=status)
            if status == "approved":  # and the approvals carried out since
                executed = await recorded(sim.url, status="executed")
                expected = [p for p in await recorded(sim.url) if p in {*expected, *executed}]
            assert shown(screen) == expected, status
        await pilot.press("s")
        assert screen.status_filter is None
        await pilot.press("f", "tab", *"bob", "enter")
        assert shown(screen) == await recorded(sim.url, decided_by="bob")
        assert shown(screen) == [prop_b.proposal_id]
        await pilot.press("f", *prop_a.run_id, "tab", "ctrl+u", "enter")  # run A, anyone
        assert shown(screen) == await recorded(sim.url, run_id=prop_a.run_id)

        # A decided proposal opens as its record, with nothing left to decide.
        await pilot.press("f", "ctrl+u", "tab", *"bob", "enter")
        assert shown(screen) == [prop_b.proposal_id]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        modal = app.screen
        assert isinstance(modal, ProposalModal) and modal.shows(prop_b.proposal_id)
        assert {b.id for b in modal.query(Button)} == {"decide-later"}
        decided = str(modal.query_one("#proposal-decided", Static).render())
        at = trail[prop_b.proposal_id].decided_at
        assert at is not None
        assert decided == (
            f"Decided: REJECTED by bob at {when(at, modal.now())}. "
            "Comment: bad shard [bold]x[/] ␛[31m"
        )
        # The loss window ends at the ask: what the operator decided on.
        window = modal.query_one(LossWindow)
        await wait_for(pilot, lambda: window.samples > 0, what="the loss window")
        last_x = window.tracker.bank["loss"].last_x
        assert last_x is not None and last_x <= prop_b.created_at.timestamp()
        await pilot.press("escape")
        assert app.screen is screen
    # Reading the trail decided nothing.
    async with as_operator(sim.url, ALICE) as client:
        assert {p.proposal_id: p for p in await client.all_proposals()} == trail


async def test_palette_and_decisions_reach_a_pending_proposal_of_another_run(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim, prop_a, prop_b = await two_runs_asking(sim_factory)
    app, _client = live_app(sim.url, prop_a.run_id, tmp_path)  # run A's pipeline on screen
    async with app.run_test(size=(120, 40)) as pilot:

        def modal_for(pid: str) -> bool:
            top = app.screen
            return isinstance(top, ProposalModal) and top.shows(pid) and top.focused is not None

        await wait_for(pilot, lambda: modal_for(prop_a.proposal_id), 60, "run A's own modal")
        await pilot.press("escape")  # decide later
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*prop_b.proposal_id)
        await pilot.pause(0.8)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: modal_for(prop_b.proposal_id), what="run B's from the palette"
        )
        modal = app.screen
        assert isinstance(modal, ProposalModal) and not modal.read_only
        assert {"reject", "approve"} <= {b.id for b in modal.query(Button)}
        await pilot.press("escape")  # decide later: nothing is sent
        pending = await recorded(sim.url, status="pending")
        assert sorted(pending) == sorted([prop_a.proposal_id, prop_b.proposal_id])

        # From the Decisions screen: the real two-step approval of run B's proposal.
        await pilot.press("ctrl+r")
        screen = await open_decisions(pilot)
        await pilot.press("s")  # pending only
        assert shown(screen) == pending
        table = screen.query_one(DecisionTable)
        table.move_cursor(row=table.get_row_index(prop_b.proposal_id))
        assert cell(screen, prop_b.proposal_id, "status").startswith("pending · ")
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_for(prop_b.proposal_id), what="the modal")
        await pilot.press("tab", "tab", "enter")  # Approve restart…: only asks
        await pilot.press(*"approve", "enter")
        modal = app.screen
        assert isinstance(modal, ProposalModal)
        await wait_for(pilot, lambda: modal.proposal is not None and modal.proposal.decided_by)
        await pilot.press("escape")
        await wait_for(pilot, lambda: prop_b.proposal_id not in shown(screen), what="a re-read")
        assert shown(screen) == [prop_a.proposal_id] == await recorded(sim.url, status="pending")
    async with as_operator(sim.url, ALICE) as client:
        (decided,) = await client.all_proposals(decided_by="alice")
    assert decided.proposal_id == prop_b.proposal_id and str(decided.status) in (
        "approved",
        "executed",
    )
