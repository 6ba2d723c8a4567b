"""Pilot tests of the pipeline, the proposal modal and alerts against a real desk_sim."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from textual.widgets import Button

from ito_tui.client import ItoClient
from ito_tui.contract import STAGE_ORDER
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.widgets.gate_banner import GateBanner

from .pipeline_live import has_pipeline, live_app, pipeline_of, start_run, wait_for

pytestmark = pytest.mark.slow
SPEED = 300_000.0
"""Fast enough for a whole run in seconds, slow enough to open the screen before it ends."""
APPROVAL_SPEED = 5.0
"""While a proposal waits the sim clock crawls, so it cannot expire during a test."""


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("ITO_CONFIG_FILE", str(config))


async def proposals_of(url: str, run_id: str, token: str = "s3cret") -> list[Any]:
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
        await wait_for(pilot, lambda: has_pipeline(app), what="pipeline screen")
        screen = pipeline_of(app)
        # The showcase escalates one loss spike to a person: approve it deliberately.
        await wait_for(pilot, lambda: modal_of(app) is not None, what="the proposal modal")
        await approve_deliberately(pilot)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await pilot.pause(0.7)
        state = screen.run_state
        assert state.outcome == "completed"
        assert [str(s.name) for s in state.stages][:9] == [s.value for s in STAGE_ORDER]
        assert all(str(s.state) in ("passed", "skipped") for s in state.stages)
        ended = [
            e.text.split()[0]
            for e in screen.tracker.log
            if e.type in ("stage.completed", "stage.skipped")
        ]
        # What happened while the screen was open ended in pipeline order, once each.
        order = [s.value for s in STAGE_ORDER]
        assert ended and ended == order[len(order) - len(ended) :], ended
        assert "completed" in (screen._alerter.title or "")
        kinds = [a.kind for a in screen._alerter.sent]
        assert kinds[-1] == "run_end"


async def test_gate_fail_banner_and_no_way_past(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="gate-fail", speed=SPEED)
    run_id = await start_run(sim.url, "gate-fail")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: has_pipeline(app), what="pipeline screen")
        screen = pipeline_of(app)
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
        await wait_for(pilot, lambda: screen.charts.rewind_count >= 1, 60, "a rewind marker")
        assert screen.run_state.rewinds
        await wait_for(
            pilot,
            lambda: "↶" in str(screen.query_one("#telemetry-caption").render()),
            5,
            "caption marker",
        )


async def test_read_only_offers_no_decision(sim_factory: Callable[..., Any], tmp_path: Path):
    sim = sim_factory(scenario="loss-spike", speed=SPEED, approval_speed=APPROVAL_SPEED)
    run_id = await start_run(sim.url, "loss-spike")
    app, client = live_app(sim.url, run_id, tmp_path, read_only=True)
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
