"""What the proposal modal's comment takes: text typed on a button becomes the comment once
the modal has been on screen a moment (`OPEN_GRACE_S`), never a key that came with it,
and an Enter that came with it does not press Decide later.

An operator pressing `2` for the run screen's second tab just as the loss-spike modal
popped up used to type "2" into the comment, recorded with the decision.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from ito_tui.tui.screens import proposal as proposal_screen
from ito_tui.tui.screens.proposal import ProposalModal
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


@asynccontextmanager
async def modal_over_the_run(
    client: FakeRunClient,
) -> AsyncIterator[tuple[Pilot[Any], ProposalModal]]:
    """The pipeline over `client`'s script (a spike and its proposal), its modal on top."""
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ProposalModal)
        yield pilot, app.screen


async def test_a_key_pressed_as_the_modal_pops_up_is_not_recorded_as_the_comment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # However slow the machine, the keys arrive within the grace.
    monkeypatch.setattr(proposal_screen, "OPEN_GRACE_S", 3600.0, raising=False)
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with modal_over_the_run(client) as (pilot, modal):
        later = modal.query_one("#decide-later")
        assert modal.focused is later
        await pilot.press("2", "l")  # a tab of the run screen, the logs' key
        comment = modal.query_one("#comment", Input)
        assert comment.value == "" and modal.focused is later
        await pilot.press("tab", "enter")  # Reject
        await wait_for(pilot, lambda: client.decisions, what="the decision")
        assert [d[:3] for d in client.decisions] == [("reject", "prop_91c2", None)]


async def test_a_focused_comment_takes_keys_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proposal_screen, "OPEN_GRACE_S", 3600.0)
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with modal_over_the_run(client) as (pilot, modal):
        comment = modal.query_one("#comment", Input)
        await pilot.press("shift+tab")  # from Decide later back to the comment box
        assert modal.focused is comment
        await pilot.press(*"bad shard")
        assert comment.value == "bad shard"


async def test_typing_on_a_button_after_the_grace_becomes_the_comment() -> None:
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with modal_over_the_run(client) as (pilot, modal):
        await wait_for(pilot, lambda: modal.settled, what="the modal to settle")
        await pilot.press(*"2 spikes")
        comment = modal.query_one("#comment", Input)
        assert comment.value == "2 spikes" and modal.focused is comment


async def test_an_enter_that_came_with_the_modal_does_not_close_it_unread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(proposal_screen, "OPEN_GRACE_S", 3600.0, raising=False)
    client = FakeRunClient(script=pretrain_script(spike=True).events)
    async with modal_over_the_run(client) as (pilot, modal):
        await pilot.press("enter")  # on Decide later, meant for the screen below
        await pilot.pause()
        assert pilot.app.screen is modal
        await pilot.press("escape")  # Esc closes at once: a key meant for the modal
        await wait_for(pilot, lambda: pilot.app.screen is not modal, what="the modal to close")
        assert client.decisions == []
