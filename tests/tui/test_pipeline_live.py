"""Pilot tests of the pipeline, the proposal modal and alerts against a real desk_sim."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from textual.widgets import Button

from ito_tui.client import ItoClient
from ito_tui.contract import STAGE_ORDER
from ito_tui.format import stage_label
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.widgets.gate_banner import GateBanner
from tests.simproc import SimProcess

from .pipeline_live import (
    APPROVAL_SPEED,
    live_app,
    pipeline_of,
    record_seqs,
    shown_pipeline,
    start_run,
    wait_for,
)
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

pytestmark = pytest.mark.slow
SPEED = 300_000.0
"""Fast enough for a whole run in seconds, slow enough to open the screen before it ends."""


async def proposals_of(url: str, run_id: str, token: str = "s3cret") -> list[Any]:  # noqa: S107
    async with ItoClient(url, token=SecretStr(token)) as client:
        return await client.proposals(run_id)


def modal_of(app: Any) -> ProposalModal | None:
    """The proposal modal on top, once mounted and focused (ready for keys)."""
    screen = app.screen
    if isinstance(screen, ProposalModal) and screen.focused is not None:
        return screen
    return None


async def approve_deliberately(pilot: Any) -> None:
    """The two steps: Approve restart… (Tab, Tab, Enter), then type `approve` and Enter."""
    await pilot.press("tab", "tab", "enter")
    await pilot.press(*"approve")
    await pilot.press("enter")


async def test_showcase_stages_pass_in_order(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="showcase", speed=SPEED, approval_speed=APPROVAL_SPEED)
    run_id = await start_run(sim.url, "showcase")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await shown_pipeline(pilot, app)
        # The showcase escalates one loss spike to a person: approve it deliberately.
        await wait_for(pilot, lambda: modal_of(app) is not None, what="the proposal modal")
        await approve_deliberately(pilot)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await pilot.pause(0.7)
        state = screen.run_state
        assert state.outcome == "completed"
        assert [str(s.name) for s in state.stages][:9] == [s.value for s in STAGE_ORDER]
        assert all(str(s.state) in ("passed", "skipped") for s in state.stages)
        order = [stage_label(s.value) for s in STAGE_ORDER]
        ended = [
            next(label for label in order if e.text.startswith(f"{label} "))
            for e in screen.tracker.log
            if e.type in ("stage.completed", "stage.skipped")
        ]
        # What happened while the screen was open ended in pipeline order, once each.
        assert ended and ended == order[len(order) - len(ended) :], ended
        assert "completed" in (app.alerter.title or "")
        kinds = [a.kind for a in app.alerter.sent]
        assert kinds[-1] == "run_end"


async def test_a_run_opened_after_it_ended_shows_its_history_in_the_log(
    sim_factory: Callable[..., Any], tmp_path: Path
):
    sim = sim_factory(scenario="gate-fail", speed=SPEED)
    run_id = await start_run(sim.url, "gate-fail")
    async with ItoClient(sim.url, token=SecretStr("s3cret")) as client:
        for _ in range(600):
            if (run := await client.run(run_id)).terminal:
                break
            await asyncio.sleep(0.05)
    assert run.terminal
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.tracker.log.appended > 5, what="the history")
        await pilot.pause(0.3)
        # Everything happened before the screen opened: the log says what, in order...
        seqs = [e.seq for e in screen.tracker.log]
        assert seqs == sorted(set(seqs)) and seqs[-1] <= run.last_event_seq
        types = [e.type for e in screen.tracker.log]
        assert types[0] == "run.accepted" and "gate.failed" in types and types[-1] == "run.failed"
        # ...while the state is the snapshot's, and nothing old rings or toasts.
        assert screen.run_state.last_seq == run.last_event_seq
        assert screen.run_state.outcome == "gate_failed"
        assert list(app.alerter.sent) == []


@pytest.mark.faults
async def test_gate_fail_banner_and_no_way_past(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="gate-fail", speed=SPEED)
    run_id = await start_run(sim.url, "gate-fail")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await pilot.pause(0.3)
        banner = screen.query_one(GateBanner)
        assert banner.display and banner.gate is not None
        assert str(banner.gate.stage) == "mid_train"
        text = str(banner.render())
        assert "stopped" in text and banner.gate.failing
        for result in banner.gate.failing:
            assert result.benchmark in text
        # No binding anywhere, and no palette command, continues, overrides or approves.
        forbidden = re.compile(r"continu|overrid|resum|proceed|approv|force|ignore|retry", re.I)
        names: list[str] = []
        for node in [app, screen, *screen.walk_children()]:
            for binding in getattr(node, "BINDINGS", []):
                names += [
                    str(getattr(binding, "action", binding)),
                    str(getattr(binding, "description", "")),
                ]
        names += [f"{c.title} {c.help}" for c in app.get_system_commands(screen)]
        assert names and not [n for n in names if forbidden.search(n)]
        assert screen.check_action("review_proposal", ()) is False
        assert screen.check_action("cancel_run", ()) is False


@pytest.mark.faults
async def test_loss_spike_modal_is_human_gated(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="loss-spike", speed=SPEED, approval_speed=APPROVAL_SPEED)
    run_id = await start_run(sim.url, "loss-spike")
    app, client = live_app(sim.url, run_id, tmp_path)
    sent: list[str] = []
    real_approve, real_reject = client.approve, client.reject

    async def spy_approve(*a: Any, **kw: Any) -> Any:
        sent.append("approve")
        return await real_approve(*a, **kw)

    async def spy_reject(*a: Any, **kw: Any) -> Any:
        sent.append("reject")
        return await real_reject(*a, **kw)

    client.approve, client.reject = spy_approve, spy_reject  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: modal_of(app) is not None, 60, "the proposal modal")
        modal = modal_of(app)
        assert modal is not None and modal.focused is not None
        assert modal.focused.id == "decide-later"
        # Esc and Enter on the default choice send nothing.
        await pilot.press("escape")
        assert modal_of(app) is None
        screen = pipeline_of(app)
        await pilot.press("p")
        await wait_for(pilot, lambda: modal_of(app) is not None, what="modal via p")
        # An Enter that came with the modal is ignored (its open grace): press it once
        # the operator has seen the modal.
        settled = lambda: (m := modal_of(app)) is not None and m.settled  # noqa: E731
        await wait_for(pilot, settled, what="the modal settled")
        await pilot.press("enter")
        assert modal_of(app) is None
        (proposal,) = [p for p in await proposals_of(sim.url, run_id) if p.status == "pending"]
        assert sent == []
        # Approve's first step only asks; a wrong word does nothing.
        await pilot.press("p")
        await wait_for(pilot, lambda: modal_of(app) is not None, what="modal again")
        await pilot.press("tab", "tab", "enter")
        assert app.screen.focused is not None and app.screen.focused.id == "confirm-input"
        await pilot.press(*"approv", "enter")
        confirm = app.screen.query_one("#confirm-approve", Button)
        assert confirm.disabled and sent == []
        pending = [p for p in await proposals_of(sim.url, run_id) if p.status == "pending"]
        assert [p.proposal_id for p in pending] == [proposal.proposal_id]
        # Completing the word and pressing Enter twice sends one decision: the second
        # press meets the in-flight guard or, once answered, the Close button.
        await pilot.press("e", "enter", "enter")
        await wait_for(pilot, lambda: bool(sent), what="the decision")
        await pilot.pause(0.3)
        if isinstance(app.screen, ProposalModal):
            await pilot.press("escape")
        assert sent == ["approve"]
        decided = {p.proposal_id: p for p in await proposals_of(sim.url, run_id)}
        assert str(decided[proposal.proposal_id].status) in ("approved", "executed")
        assert decided[proposal.proposal_id].decided_by == "alice"
        # The approved rollback rewinds the step counter: a marker on the loss chart.
        await wait_for(pilot, lambda: screen.tracker.rewinds >= 1, 60, "a rewind marker")
        assert screen.run_state.rewinds
        await wait_for(
            pilot,
            lambda: "↶" in str(screen.query_one("#telemetry-caption").render()),
            5,
            "caption marker",
        )


@pytest.mark.faults
async def test_read_only_offers_no_decision(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="loss-spike", speed=SPEED, approval_speed=APPROVAL_SPEED)
    run_id = await start_run(sim.url, "loss-spike")
    app, _client = live_app(sim.url, run_id, tmp_path, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: modal_of(app) is not None, 60, "the proposal modal")
        modal = modal_of(app)
        assert modal is not None
        ids = {b.id for b in modal.query(Button)}
        assert ids == {"decide-later"}
        assert not modal.query("#confirm-input")
        await pilot.press("tab", "enter", "tab", "enter", "escape")
        # Nothing was decided by a person (expiry, by the backend, is not a decision).
        for p in await proposals_of(sim.url, run_id):
            assert p.decided_by is None and str(p.status) in ("pending", "expired")
        assert pipeline_of(app).check_action("cancel_run", ()) is False


@pytest.mark.faults
async def test_two_operators_decide_at_once(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="loss-spike", speed=SPEED, approval_speed=APPROVAL_SPEED)
    run_id = await start_run(sim.url, "loss-spike")
    alice_app, _ = live_app(sim.url, run_id, tmp_path)
    bob_app, _ = live_app(sim.url, run_id, tmp_path, token="hunter2")
    async with alice_app.run_test(size=(80, 24)) as alice, bob_app.run_test(size=(80, 24)) as bob:
        await wait_for(alice, lambda: modal_of(alice_app) is not None, 60, "alice's modal")
        await wait_for(bob, lambda: modal_of(bob_app) is not None, 60, "bob's modal")
        alice_modal, bob_modal = modal_of(alice_app), modal_of(bob_app)
        assert alice_modal is not None and bob_modal is not None
        # Alice gets to her confirm step, Bob to Reject; then both press Enter at once.
        await alice.press("tab", "tab", "enter", *"approve")
        await bob.press("tab")
        assert bob_modal.focused is not None and bob_modal.focused.id == "reject"
        await asyncio.gather(alice.press("enter"), bob.press("enter"))

        def settled(modal: ProposalModal) -> bool:
            return modal.proposal is not None and str(modal.proposal.status) != "pending"

        await wait_for(alice, lambda: settled(alice_modal), 20, "alice sees the outcome")
        await wait_for(bob, lambda: settled(bob_modal), 20, "bob sees the outcome")
        (final,) = [p for p in await proposals_of(sim.url, run_id) if p.decided_by]
        winner = {"approved": "alice", "executed": "alice", "rejected": "bob"}[str(final.status)]
        assert final.decided_by == winner
        loser_modal = bob_modal if winner == "alice" else alice_modal
        loser_app = bob_app if winner == "alice" else alice_app
        print(
            "STACK",
            winner,
            loser_app.screen_stack,
            alice_modal.is_attached,
            bob_modal.is_attached,
            final,
        )
        assert loser_modal.proposal is not None
        assert loser_modal.proposal.decided_by == winner
        shown = str(loser_modal.query_one("#proposal-decided").render())
        assert "someone else" in shown and winner in shown
        assert not loser_modal.query_one("#approve").display or loser_modal.query_one(
            "#approve"
        ).has_class("-hidden")


@pytest.mark.faults
async def test_stream_survives_backend_restart(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # 10,000x: at 20,000x a loaded machine's run once ended before the kill (no reconnect).
    proc = SimProcess(tmp_path / "sim.db", port=port, speed=10_000, scenario="happy", heartbeat=1)
    url = proc.start()
    try:
        run_id = await start_run(url, "happy")
        app, _client = live_app(url, run_id, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await shown_pipeline(pilot, app)
            seen = record_seqs(screen)
            await wait_for(pilot, lambda: len(seen) > 20, 30, "events flowing")
            assert not screen.run_state.terminal, "the run ended before the backend was killed"
            proc.kill()
            await wait_for(
                pilot,
                lambda: "reconnecting" in str(screen.query_one("HeaderStrip").render()),
                30,
                "the header to say reconnecting",
            )
            proc.start()
            await wait_for(pilot, lambda: screen.run_state.terminal, 90, "the run's end")
            # Every event after the first one seen arrived exactly once, in order.
            assert seen == list(range(seen[0], seen[-1] + 1))
            assert screen.run_state.outcome == "completed"
            assert all(str(s.state) in ("passed", "skipped") for s in screen.run_state.stages)
    finally:
        proc.stop()
