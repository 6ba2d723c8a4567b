"""Snapshots of the Decisions screen and of a decided proposal opened from it, built by
`make_app` over a frozen trail (fixed proposals, frozen clock), at 80×24 and 120×40."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.decisions import DecisionsScreen
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.widgets.loss_window import LossWindow
from tests.support.apps import SIZE_IDS, SIZES

from .shell_fakes import NOW, FakeTrailClient
from .shell_helpers import isolated_user_dirs, settings, wait_for  # noqa: F401

RunBefore = Callable[[Pilot[Any]], Awaitable[None]]


def trail_app(client: FakeTrailClient) -> ItoApp:
    return make_app(
        settings(backend_url="http://127.0.0.1:8741"), client, clock=lambda: NOW, start="runs"
    )


def decisions(*keys: str) -> RunBefore:
    """From the runs list, `d`, then `keys` once the trail is read."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        await pilot.press("d")
        await wait_for(
            pilot, lambda: isinstance(app.screen, DecisionsScreen) and app.screen.fetches
        )
        await pilot.press(*keys)
        await pilot.pause(0.2)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_decisions_trail(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the Decisions header, the caption `status: all (s) · run: any · by:
    anyone (f) · 5 of 5 proposals · 1 pending`, and five proposals on three runs, newest
    first: the pending rollback with `pending · 2m10s` in the needs-human colour, alice's
    budget extension carried out (`executed`), bob's rejection, an expiry (decided by `–`,
    when it expired) and alice's earlier rollback — each with its run, kind in words
    (`rollback + skip`, `extend budget`), who decided, when (`11-29 11:19:00`: date and
    UTC time) and the comment; at 120×40 also when each was asked. Under the table the
    highlighted one: its id, `asked 2026-11-29 11:59:10 UTC`, why, and its comment."""
    app = trail_app(FakeTrailClient())
    assert snap_compare(app, terminal_size=size, run_before=decisions())


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_decisions_filtered_by_operator(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the filter row (`run` empty, `by` = alice) and only alice's two
    decisions, the caption saying `by: alice (f) · 2 of 5 proposals`."""
    app = trail_app(FakeTrailClient())
    run_before = decisions("f", "tab", *"alice", "enter")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_decided_proposal_record(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see bob's rejection opened from the Decisions screen as its record:
    `Proposal prop_4be1c07a93d2_2 · Roll back and skip batches · run … · REJECTED`, when it
    was asked (date and UTC time) and that the run was paused, the trigger's evidence, the
    loss of the 15 minutes before the ask ending in the spike, what approving would have
    done and cost, `Decided: REJECTED by bob at 2026-11-29 10:26:00 UTC.` with his
    comment, and only Close."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await decisions("down", "down", "enter")(pilot)
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        window = app.screen.query_one(LossWindow)
        await wait_for(pilot, lambda: window.samples > 0)
        await pilot.pause(0.2)

    app = trail_app(FakeTrailClient())
    assert snap_compare(app, terminal_size=size, run_before=run_before)
