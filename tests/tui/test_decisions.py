"""The Decisions screen and the palette's proposals over a frozen trail: literal text, the
empty and failed states, filters, polling, the missing capability and read-only sessions.

What desk_sim records and the screen shows for two real operators is in
test_decisions_live.py; these cover what a real backend cannot be made to send on cue.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

import pytest
from textual.binding import Binding
from textual.widgets import Button, DataTable, Static

from ito_tui.alerting.needs import MissedProposal, NeedsYou
from ito_tui.client import ItoError
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.commands import ItoCommands, proposal_line
from ito_tui.tui.messages import NeedsYouChanged
from ito_tui.tui.screens.capability import CapabilityScreen
from ito_tui.tui.screens.decisions import DecisionsScreen
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.widgets.decision_table import DecisionTable, matches
from ito_tui.tui.widgets.loss_window import LossWindow
from tests.support.apps import assert_steady_fields, bottom_row_keys

from .shell_fakes import NOW, RUN_A, RUN_B, FakeTrailClient, capabilities, proposal, trail
from .shell_helpers import isolated_user_dirs, screen_text, settings, wait_for  # noqa: F401

SIZE = (120, 40)


def trail_app(client: FakeTrailClient, *, read_only: bool = False) -> ItoApp:
    return make_app(
        settings(backend_url="http://127.0.0.1:8741"),
        client,
        clock=lambda: NOW,
        start="runs",
        read_only=read_only,
    )


async def open_decisions(pilot: Any) -> DecisionsScreen:
    """From the runs list, `d`; returns the screen once it has read the trail."""
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(app.screen, DecisionsScreen) and app.screen.fetches)
    assert_steady_fields(app.screen)
    return app.screen  # type: ignore[no-any-return]  # pilot.app is App[Any]


def shown_ids(screen: DecisionsScreen) -> list[str]:
    table = screen.query_one(DataTable)
    return [str(key.value) for key in table.rows]


@pytest.mark.faults
async def test_backend_text_in_a_decision_is_shown_literally_and_inert() -> None:
    hostile = proposal(
        "prop_4be1c07a93d2_9",
        RUN_A,
        "rejected",
        asked=NOW - timedelta(minutes=5),
        by="[i]mallory[/i]",
        decided=NOW - timedelta(minutes=4),
        comment="[bold]x[/] \x1b[31mred\x1b[0m\nsecond line",
    )
    client = FakeTrailClient([hostile])
    app = trail_app(client)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_decisions(pilot)
        text = screen_text(pilot)
        # In the table, on one line and cut to fit, and whole in the line under it.
        assert "  [bold]x[/] ␛[31mred␛[0" in text
        assert "Comment  [bold]x[/] ␛[31mred␛[0m second line" in text
        assert "[i]mallory[/i]" in text
        assert "\x1b" not in text
        assert screen.shown() == [hostile]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        await pilot.pause(0.2)
        decided = str(app.screen.query_one("#proposal-decided", Static).render())
        assert decided == (
            "Decided: REJECTED by [i]mallory[/i] at 11:56:00 UTC. "
            "Comment: [bold]x[/] ␛[31mred␛[0m\nsecond line"
        )
        text = screen_text(pilot)
        assert "[i]mallory[/i]" in text and "␛[31mred" in text and "\x1b" not in text


async def test_an_empty_trail_says_what_will_appear_there() -> None:
    app = trail_app(FakeTrailClient([]))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decisions(pilot)
        text = screen_text(pilot)
        assert "No proposals on this backend yet." in text
        assert "who decided it stays on record" in " ".join(text.split())
        assert screen.has_class("-empty") and not screen.query_one(DataTable).display
        assert screen.check_action("open", ()) is False


@pytest.mark.faults
async def test_a_failed_read_is_said_literally_once_and_retried() -> None:
    client = FakeTrailClient()
    client.trail_error = ItoError("GET /v1/proposals: 500 [red]boom[/red] \x1b[2J")
    app = trail_app(client)
    toasts: list[tuple[str, str | None]] = []
    real_notify = app.notify

    def notify(message: str, *a: Any, title: str | None = None, **kw: Any) -> None:
        toasts.append((message, title))
        real_notify(message, *a, title=title, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        await pilot.press("d")
        await wait_for(pilot, lambda: len(client.trail_reads) >= 3, what="two retries")
        screen = app.screen
        assert isinstance(screen, DecisionsScreen) and not screen.fetches
        text = screen_text(pilot)
        assert "Could not read the decisions: GET /v1/proposals: 500 [red]boom[/red] ␛[2J" in text
        assert not screen.query_one(DataTable).loading
        # The app's sink told once (a toast), not once per retry.
        assert [t for t in toasts if t[1] == "Backend error"] == [
            ("GET /v1/proposals: 500 [red]boom[/red] ␛[2J", "Backend error")
        ]
        client.trail_error = None
        await pilot.press("r")
        # At least one good read: the poll after it (a second or two on) may land before a
        # loaded machine's wait looks again (a wait for exactly 1 timed out on 10 workers).
        await wait_for(pilot, lambda: screen.fetches >= 1, what="a good read")
        assert len(shown_ids(screen)) == 5 and "Could not" not in screen_text(pilot)


async def test_without_proposals_read_the_app_names_the_missing_capability() -> None:
    client = FakeTrailClient(caps=capabilities(missing=("proposals.read",)))
    app = trail_app(client)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, CapabilityScreen))
        assert app.screen.capability == "proposals.read"
        said = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "so reading proposals and who decided them (the Decisions screen) is" in said
        assert client.trail_reads == []  # nothing asked of an endpoint that is not there
        # The palette does not ask either.
        provider = ItoCommands(app.screen)
        await provider.startup()
        offered = [hit.text or "" async for hit in provider.discover()]
        assert offered and not [t for t in offered if t.startswith("Proposal ")]


def test_filters_combine_status_run_and_operator() -> None:
    everything = trail()
    assert [p.proposal_id for p in everything if matches(p, "approved", "", "")] == [
        "prop_9f03d2e6b7aa_2",
        "prop_4be1c07a93d2_1",
    ], "approved includes the approvals carried out (executed)"
    assert [p.proposal_id for p in everything if matches(p, None, "4BE1", "")] == [
        "prop_4be1c07a93d2_2",
        "prop_4be1c07a93d2_1",
    ]
    assert [p.proposal_id for p in everything if matches(p, None, RUN_B, "ali")] == [
        "prop_9f03d2e6b7aa_2"
    ]
    assert [p.proposal_id for p in everything if matches(p, "expired", "", "bob")] == []


async def test_keys_filter_the_table_and_the_caption_says_how() -> None:
    app = trail_app(FakeTrailClient())
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_decisions(pilot)
        assert len(shown_ids(screen)) == 5
        await pilot.press("s")
        assert shown_ids(screen) == ["prop_c2d88e14f0b5_1"]
        await pilot.press("s")
        assert shown_ids(screen) == ["prop_9f03d2e6b7aa_2", "prop_4be1c07a93d2_1"]
        await pilot.press("f", *"9f03")  # the run filter; letters are typed, not keys
        assert shown_ids(screen) == ["prop_9f03d2e6b7aa_2"] and screen.status_filter == "approved"
        await pilot.press("tab", *"alice", "enter")
        assert shown_ids(screen) == ["prop_9f03d2e6b7aa_2"]
        assert isinstance(app.focused, DataTable)
        caption = str(screen.query_one("#decisions-caption").render())
        assert caption.startswith("status: approved or carried out (s) · run: 9f03 · by: alice")
        await pilot.press("s", "s", "s")  # rejected, expired, then every status
        assert shown_ids(screen) == ["prop_9f03d2e6b7aa_2"]
        await pilot.press("f", "escape")  # Esc leaves the filter, not the screen
        assert app.screen is screen and isinstance(app.focused, DataTable)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_polls_read_only_what_can_still_change() -> None:
    client = FakeTrailClient()
    app = make_app(
        settings(backend_url="http://127.0.0.1:8741", refresh_s=1.0),
        client,
        clock=lambda: NOW,
        start="runs",
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_decisions(pilot)
        await wait_for(pilot, lambda: screen.fetches >= 2, what="a poll")
        first, poll = client.trail_reads[0], client.trail_reads[1]
        assert first["since"] is None
        # The oldest proposal still open (the approval carried out is not) is the pending one.
        assert poll["since"] == NOW - timedelta(seconds=50)
        await pilot.press("r")  # a refresh reads everything again
        await wait_for(pilot, lambda: screen.fetches >= 3)
        assert client.trail_reads[2]["since"] is None


async def test_read_only_session_opens_a_pending_proposal_without_choices() -> None:
    client = FakeTrailClient()
    app = trail_app(client, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await open_decisions(pilot)
        await pilot.press("enter")  # the pending one, newest
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        modal = app.screen
        assert {b.id for b in modal.query(Button)} == {"decide-later"}
        assert "read-only display" in screen_text(pilot)


async def test_a_decided_proposal_opens_as_its_record_with_the_loss_before_the_ask() -> None:
    client = FakeTrailClient()
    app = trail_app(client)
    async with app.run_test(size=SIZE) as pilot:
        await open_decisions(pilot)
        await pilot.press("down", "down", "enter")  # bob's rejection on run A
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        modal = app.screen
        window = modal.query_one(LossWindow)
        await wait_for(pilot, lambda: window.samples > 0, what="the loss window")
        # The chart ends at the ask (the spike), not with the 29 samples after it.
        assert modal.proposal is not None
        ask = modal.proposal.created_at.timestamp()
        assert window.tracker.bank["loss"].last_x == ask
        assert window.tracker.bank["loss"].last is not None and window.tracker.bank["loss"].last > 3
        title, asked, why, cost, decided = (
            str(modal.query_one(f"#proposal-{part}", Static).render())
            for part in ("title", "paused", "why", "cost", "decided")
        )
        assert title.startswith("Proposal prop_4be1c07a93d2_2 · Roll back and skip batches")
        assert asked == "Asked 10:25:00 UTC; the run was paused while it waited."
        assert decided == (
            "Decided: REJECTED by bob at 10:26:00 UTC. "
            "Comment: spike is a bad shard, skipping it is enough"
        )
        # The reason says z and the window already: not said twice.
        assert why.endswith("window (escalation threshold z >= 8) · step 10,871 · loss 3.159")
        assert cost == "Cost  371 lost steps · +12.4 GPU-h · +$31.00"
        assert {b.id for b in modal.query(Button)} == {"decide-later"}
        assert modal.query_one("#proposal-who").has_class("-hidden")  # the decision says who
        assert client.telemetry_reads == [RUN_A]
        # Decided: Escape closes, and the footer says so (it said `esc Decide later`).
        assert bottom_row_keys(app) == ["esc Close"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ProposalModal), what="closed")


def test_the_palette_line_of_a_pending_proposal() -> None:
    (pending,) = [p for p in trail() if str(p.status) == "pending"]
    assert proposal_line(pending, NOW) == (
        "Proposal prop_c2d88e14f0b5_1 · run_c2d88e14f0b5 · rollback + skip · expires in 2m10s"
    )
    assert proposal_line(pending, NOW + timedelta(minutes=5)).endswith("· expiring now")
    budget = proposal("prop_x", RUN_B, "pending", asked=NOW, kind="extend_budget")
    assert " · extend budget · expires in 3m00s" in proposal_line(budget, NOW)


async def test_the_palette_lists_decisions_once_and_each_pending_proposal() -> None:
    app = trail_app(FakeTrailClient())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        # The runs list's `d` and the app's command are one entry.
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles.count("Decisions") == 1
        provider = ItoCommands(app.screen)
        await provider.startup()
        hits = [hit async for hit in provider.discover()]
        proposals = [(h.text, h.command) for h in hits if h.text and "prop_" in h.text]
        assert [text for text, _ in proposals] == [
            "Proposal prop_c2d88e14f0b5_1 · run_c2d88e14f0b5 · rollback + skip · expires in 2m10s"
        ]  # only the pending one
        proposals[0][1]()
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        modal = app.screen
        assert modal.shows("prop_c2d88e14f0b5_1") and not modal.read_only
        assert modal.focused is not None and modal.focused.id == "decide-later"


async def test_a_proposal_that_expired_while_nobody_looked_says_so() -> None:
    app = trail_app(FakeTrailClient())
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_decisions(pilot)
        table = screen.query_one(DecisionTable)
        assert str(table.get_cell("prop_9f03d2e6b7aa_1", "status")) == "expired"
        missed = MissedProposal(
            RUN_B, "prop_9f03d2e6b7aa_1", "rollback_and_skip", "expired", None, NOW, seen=False
        )
        screen.post_message(NeedsYouChanged(NeedsYou(missed=(missed,))))
        await pilot.pause(0.1)
        assert str(table.get_cell("prop_9f03d2e6b7aa_1", "status")) == "expired unseen"
        seen = dataclasses.replace(missed, seen=True)
        screen.post_message(NeedsYouChanged(NeedsYou(missed=(seen,))))
        await pilot.pause(0.1)
        assert str(table.get_cell("prop_9f03d2e6b7aa_1", "status")) == "expired"


def test_every_key_of_the_screen_is_described_and_safe_in_tmux() -> None:
    swallowed = {"ctrl+a", "ctrl+b", "ctrl+s", "ctrl+j", "ctrl+enter"}
    for binding in DecisionsScreen.BINDINGS:
        assert isinstance(binding, Binding)
        assert binding.id and binding.id.startswith("decisions.")
        assert binding.description and binding.tooltip
        assert not {k.strip() for k in binding.key.split(",")} & swallowed


async def test_the_table_says_it_is_loading_until_the_trail_is_read() -> None:
    client = FakeTrailClient()
    answer = asyncio.Event()
    real = client.all_proposals

    async def slow(**filters: Any) -> list[Any]:
        await answer.wait()
        return await real(**filters)

    client.all_proposals = slow  # type: ignore[method-assign]
    app = trail_app(client)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.fetches)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DecisionsScreen))
        screen = app.screen
        await pilot.pause(0.2)
        table = screen.query_one(DecisionTable)
        assert table.loading and not screen.has_class("-empty")  # not "no proposals yet"
        answer.set()
        await wait_for(pilot, lambda: screen.fetches == 1)
        assert not table.loading and len(shown_ids(screen)) == 5
