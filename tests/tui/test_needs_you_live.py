"""App-wide alerts against a real desk_sim: another run's proposal alerts on every screen,
the header counts what needs you, ctrl+n opens it, a missed one stays on the runs list."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.screens.spec_form import SpecFormScreen
from ito_tui.tui.widgets.eventlog import EventLogView
from ito_tui.tui.widgets.header import HeaderStrip

from .live_alerts import PROPOSAL_SCALE, SLOW_SCALE, alert_app, following, proposals_of
from .pipeline_live import start_run, wait_for
from .shell_helpers import isolated_user_dirs, screen_text  # noqa: F401 (autouse fixture)

pytestmark = pytest.mark.slow
COUNTER = re.compile(r"⚠ 1 needs you · \d+m\d\ds")
"""The header's counter: one proposal, the time to its expiry (about 48 min here)."""


def header_text(app: Any) -> str:
    """The header strip of the screen on top, or of the one under a modal."""
    for screen in reversed(app.screen_stack):
        for header in screen.query(HeaderStrip):
            return str(header.render())
    raise AssertionError(f"no header in {app.screen_stack}")


async def test_another_runs_proposal_alerts_on_every_screen_and_ctrl_n_opens_it(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(approval_speed=5.0)
    run_a = await start_run(sim.url, "happy", time_scale=SLOW_SCALE)
    app = alert_app(sim.url)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        await following(pilot, app, run_a)
        assert "need" not in header_text(app)  # nothing pending: no counter
        # Run B starts while the operator looks at the runs list; its proposal comes later.
        run_b = await start_run(sim.url, "showcase", time_scale=PROPOSAL_SCALE)
        await following(pilot, app, run_b)
        await wait_for(pilot, lambda: bool(app.needs_you.pending), 60, "run B's proposal")
        await pilot.pause(0.3)
        text = screen_text(pilot)
        # A toast (ours, literal) and a bell, on the runs list: not on B's pipeline. (The
        # showcase's straggler and node failure before it ring too, if the watcher saw
        # them come.)
        assert "Needs approval" in text and f"{run_b}: " in text, text
        kinds = [a.kind for a in app.alerter.sent]
        assert kinds[-1] == "proposal", kinds
        assert set(kinds) <= {"straggler", "node_failed", "proposal"}, kinds
        assert app.bells == len(kinds)
        assert COUNTER.search(header_text(app)), header_text(app)
        urgent = app.needs_you.most_urgent()
        assert urgent is not None and urgent.run_id == run_b
        # The list marks B's row with the time left, counted down.
        await wait_for(pilot, lambda: "to approve · " in screen_text(pilot), 10, "B's mark")
        # Every screen's header counts it: bookings, the spec form, under a modal.
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        assert COUNTER.search(header_text(app)), header_text(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen), what="spec form")
        await pilot.pause(0.2)
        assert COUNTER.search(header_text(app)), header_text(app)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        await wait_for(pilot, lambda: app.screen.fetches > 0)
        await pilot.press("x")  # cancel the highlighted run? a modal asks first
        await wait_for(pilot, lambda: isinstance(app.screen, CancelRunModal), what="a modal")
        assert COUNTER.search(header_text(app)), header_text(app)
        assert COUNTER.search(screen_text(pilot))  # and it is drawn under the modal
        await pilot.press("escape")  # keep it running
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen))
        # ctrl+n, from the bookings: B's pipeline with its proposal's modal.
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen))
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal), 30, "the modal")
        assert app.screen.shows(urgent.proposal_id)
        below = app.screen_stack[-2]
        assert isinstance(below, PipelineScreen) and below.run_id == run_b
        # Shown: it can no longer expire unseen.
        assert app.alerting.watcher is not None
        assert app.alerting.watcher.seen(urgent.proposal_id)
        # Nothing rang twice, though B's pipeline and the watcher both saw its events.
        assert app.bells == len(kinds) and len(app.alerter.sent) == len(kinds)
        # While B's pipeline follows B, the watcher takes its events from it: one stream.
        watcher = app.alerting.watcher
        await wait_for(pilot, lambda: run_b not in watcher.following, 10, "B lent")
        await pilot.press("escape")  # decide later
        await wait_for(pilot, lambda: isinstance(app.screen, PipelineScreen))
        await pilot.press("escape")  # back: the watcher follows B again
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen))
        await wait_for(pilot, lambda: run_b in watcher.following, 10, "B given back")
        assert [p.run_id for p in app.needs_you.pending] == [run_b]
    assert [p.status for p in await proposals_of(sim.url, run_b)] == ["pending"]


async def test_ctrl_n_with_nothing_pending_says_so(sim_factory: Callable[..., Any]) -> None:
    sim = sim_factory()
    app = alert_app(sim.url, start="bookings")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        await wait_for(pilot, lambda: app.alerting.watcher is not None)
        await pilot.press("ctrl+n")
        await pilot.pause(0.3)
        assert isinstance(app.screen, BookingsScreen)
        assert "Nothing needs you" in screen_text(pilot)


@pytest.mark.long(seconds=20)
async def test_a_proposal_that_expired_unseen_stays_on_the_runs_list(
    sim_factory: Callable[..., Any],
) -> None:
    # A 60 s (simulated) expiry at an approval clock of 20×: it expires 3 s after it came.
    sim = sim_factory(approval_speed=20.0, proposal_ttl_s=60.0)
    app = alert_app(sim.url)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        await wait_for(pilot, lambda: app.alerting.watcher is not None)
        run_b = await start_run(sim.url, "showcase", time_scale=PROPOSAL_SCALE)
        await following(pilot, app, run_b)
        await wait_for(pilot, lambda: bool(app.needs_you.missed), 60, "the proposal to expire")
        missed = app.needs_you.missed_for(run_b)
        assert [m.label() for m in missed] == ["expired unseen"]
        await wait_for(pilot, lambda: "expired unseen" in screen_text(pilot), 10, "the mark")
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        row = screen.query_one("DataTable").get_row(run_b)  # type: ignore[attr-defined]
        assert "expired unseen" in str(row[2])
        assert not app.needs_you.pending and "need" not in header_text(app)
        # It alerted as missed too, in our words.
        assert any(a.kind == "proposal_missed" for a in app.alerter.sent)
        # The run's event log says so as well.
        app.show_run(run_b)
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, PipelineScreen) and app.screen.loaded,
            what="B's run",
        )
        log = app.screen.query_one(EventLogView)
        pid = missed[0].proposal_id
        await pilot.press("3")  # the Events tab: the log is drawn while it shows

        def expiry() -> list[str]:
            return [e.text for e in log.entries if e.type == "proposal.expired" and pid in e.text]

        await wait_for(pilot, lambda: bool(expiry()), 20, "the expiry in the event log")
        assert expiry() == [f"proposal (rollback + skip) expired unseen ({pid})"]
    assert [p.status for p in await proposals_of(sim.url, run_b)] != ["pending"]
