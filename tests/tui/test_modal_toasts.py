"""Toasts and the proposal modal: the alert toasts up when it opens come down (at 80×24
they hid its title and expiry line) and show again once it closes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ito_tui.alerting.model import Alert
from ito_tui.tui.screens.proposal import ProposalModal, review_modal
from ito_tui.tui.screens.runs import RunsScreen

from .shell_fakes import NOW, RUN_A, RUN_B, FakeTrailClient, proposal
from .shell_helpers import isolated_user_dirs, screen_text, wait_for  # noqa: F401
from .test_decisions import trail_app

NODE = Alert("node_failed", RUN_B, "Node failed", f"{RUN_B}: node gpu-node-07 failed.", seq=40)


def toasts(app: Any) -> str:
    """The text of the toasts on the screen on top (Textual's `Toast`, by type name: its
    module is private)."""
    return " ".join(str(toast.render()) for toast in app.screen.query("Toast"))


async def test_alert_toasts_step_aside_for_the_proposal_modal_and_come_back() -> None:
    pending = proposal("prop_a_1", RUN_A, "pending", asked=NOW - timedelta(minutes=1))
    app = trail_app(FakeTrailClient([pending]))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen))
        assert app.alerter.alert(NODE)
        await wait_for(pilot, lambda: "gpu-node-07" in toasts(app), what="the toast")
        app.push_screen(review_modal(pending, app.session))
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal))
        await pilot.pause(0.3)
        assert "gpu-node-07" not in toasts(app)
        assert "Expires in" in screen_text(pilot)
        await pilot.press("escape")  # decide later
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen))
        await wait_for(pilot, lambda: "gpu-node-07" in toasts(app), what="it again")
