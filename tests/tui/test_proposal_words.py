"""The proposal modal says what the CLI says: per kind its title, its Reject / Approve
labels, the confirmation's question and consequence, evidence, action, cost and the
decision's time with its date: the same `describe` words, checked against the CLI's."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.widgets import Button, Static

from ito_tui.commands.output import Output
from ito_tui.commands.render import render_proposal
from ito_tui.contract import Proposal
from ito_tui.describe import KINDS, consequence, proposal_words, reject_consequence
from ito_tui.tui.app import make_app
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.screens.runs import RunsScreen
from tests.support.proposals import NOW, proposal

from .shell_fakes import FakeShellClient
from .shell_helpers import isolated_user_dirs, settings, wait_for  # noqa: F401


@asynccontextmanager
async def opened(p: Proposal) -> AsyncIterator[tuple[Any, ProposalModal]]:
    """The real app (its CSS and bindings) on the runs list, with `p`'s modal open."""
    app = make_app(settings(), FakeShellClient(), clock=lambda: NOW, start="runs")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen))
        modal = ProposalModal(p, operator="ana")
        app.push_screen(modal)
        await wait_for(pilot, lambda: app.screen is modal and modal.is_mounted)
        await pilot.pause()
        yield pilot, modal


def _text(modal: ProposalModal, selector: str) -> str:
    return str(modal.query_one(selector, Static).render())


def _cli(p: Proposal) -> dict[str, str]:
    out = io.StringIO()
    render_proposal(Output(out, io.StringIO(), environ={}), p, now=NOW)
    pairs = re.findall(r"^  (\w+) +(.*)$", out.getvalue(), re.M)
    return dict(pairs)


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_each_kind_has_its_own_words_in_the_modal_and_the_cli(kind: str) -> None:
    p = proposal(kind)
    words = proposal_words(kind)
    async with opened(p) as (pilot, modal):
        assert words.title in _text(modal, "#proposal-title")
        assert str(modal.query_one("#approve", Button).label) == words.approve_label
        reject = modal.query_one("#reject", Button)
        assert str(reject.label) == words.reject_label
        assert reject.tooltip == reject_consequence(p)
        cli = _cli(p)
        assert _text(modal, "#proposal-why") == f"Why   {cli['why']}"
        assert _text(modal, "#proposal-what") == f"What  {cli['what']}"
        assert _text(modal, "#proposal-cost") == f"Cost  {cli['cost']}"
        assert _text(modal, "#proposal-paused") == cli["waiting"]
        modal.query_one("#approve", Button).press()
        await pilot.pause()
        confirm = modal.query_one("#confirm-label", Static)
        assert confirm.display and not confirm.has_class("-hidden")
        assert str(confirm.render()).startswith(f"{words.confirm_title} {consequence(p)} Type")


async def test_a_budget_extension_is_not_worded_as_a_restart_anywhere_in_the_modal() -> None:
    p = proposal("extend_budget")
    async with opened(p) as (pilot, modal):
        modal.query_one("#approve", Button).press()
        await pilot.pause()
        shown = [str(s.render()) for s in modal.query(Static)]
        shown += [str(b.label) for b in modal.query(Button)]
        text = "\n".join(shown)
        assert "The run continues." in text and "Approve budget…" in text
        assert "lost steps" not in text
        assert "restart" not in text.replace("not restarted", "").lower(), text


async def test_a_decision_of_another_day_carries_its_date() -> None:
    p = proposal("rollback_and_skip").model_copy(
        update={
            "status": "rejected",
            "decided_by": "bob",
            "decided_at": datetime(2026, 11, 29, 11, 56, tzinfo=UTC),
            "created_at": NOW - timedelta(days=2, hours=1),
        }
    )
    async with opened(p) as (_pilot, modal):
        decided = _text(modal, "#proposal-decided")
        assert decided.startswith("Decided: REJECTED by bob at Nov 29 11:56 UTC.")
        assert _text(modal, "#proposal-paused").startswith("Asked Nov 29 18:00 UTC;")
        assert _cli(p)["decided"] == "REJECTED by bob at Nov 29 11:56 UTC"
