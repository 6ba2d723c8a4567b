"""What the operator sees on the run screen as a real desk_sim run goes on and ends.

The real app (make_app) over HTTP on 127.0.0.1; read through rendered text and public
widget state only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import Footer, Static

from ito_tui.format import usd
from ito_tui.tui.screens.cancel import CancelRunModal
from ito_tui.tui.screens.event_line import EventLineScreen
from ito_tui.tui.screens.proposal import ProposalModal
from ito_tui.tui.widgets.eventlog import EventLogView
from ito_tui.tui.widgets.sparkline import TextSparkline
from ito_tui.tui.widgets.stages import StageList
from tests.support.apps import assert_steady_fields

from .pipeline_live import (
    APPROVAL_SPEED,
    drawn,
    live_app,
    pipeline_of,
    shown_pipeline,
    start_run,
    wait_for,
)
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

SPEED = 2_000.0
"""A 1.5B run at 2,000x: it spends every second and runs long enough that no load on the
machine ends it before the test cancels it (a 150M run ended under the modal on 8 busy
xdist workers: its spend stopped and the modal had nothing to follow)."""


def footer_text(app: Any) -> str:
    """The keys the footer offers, as drawn."""
    footer = app.screen.query_one(Footer)
    return " ".join(str(key.render()) for key in footer.query("*"))


async def test_the_cancel_modal_follows_the_spend_and_cancel_leaves_the_footer_at_the_end(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(scenario="happy", speed=SPEED)
    run_id = await start_run(sim.url, "happy", model_size="1.5B", post_training="sft")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.loaded, what="the run's snapshot")
        assert not screen.run_state.terminal
        await wait_for(pilot, lambda: "Cancel run" in footer_text(app), 5, "the footer's keys")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, CancelRunModal), what="the modal")
        assert_steady_fields(app.screen)
        assert_steady_fields(screen)  # the event search and the Logs tab's fields
        line = app.screen.query_one("#cancel-spend", Static)
        first = str(line.render())
        assert first.startswith("Spent so far: $")

        def following() -> bool:
            now = usd(screen.tracker.progress().usd_spent)
            shown = str(line.render())
            return shown != first and shown.startswith(f"Spent so far: {now} of")

        # The run keeps spending under the modal, and the modal says so.
        await wait_for(pilot, following, 30, "the modal's spend to follow the run")
        await pilot.press("escape")  # Keep running
        await wait_for(pilot, lambda: app.screen is screen, what="the modal to close")
        assert not screen.run_state.terminal and "Cancel run" in footer_text(app)
        # Now cancel it: once the run has ended the footer stops offering it.
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, CancelRunModal), what="the modal")
        await pilot.click("#confirm-cancel")
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        assert screen.run_state.state == "cancelled"
        await wait_for(pilot, lambda: app.screen is screen, what="the modal to close")
        await wait_for(pilot, lambda: "Cancel run" not in footer_text(app), 5, "the footer")
        assert screen.check_action("cancel_run", ()) is False
        await pilot.press("x")
        await pilot.pause()
        assert app.screen is screen  # nothing to ask: the run is over


async def test_a_run_waiting_for_a_person_shows_its_stage_paused(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(scenario="loss-spike", speed=300_000.0, approval_speed=APPROVAL_SPEED)
    run_id = await start_run(sim.url, "loss-spike")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalModal), 60, "the modal")
        modal = app.screen
        assert isinstance(modal, ProposalModal)

        def loss_at_its_width() -> bool:
            view = modal.loss
            return view is not None and modal.loss_width > 0 and view.width == modal.loss_width

        # The run screen pushes the loss to the modal, at the width its chart announced.
        await wait_for(pilot, loss_at_its_width, 5, "the loss chart at its own width")
        chart = modal.query_one("#proposal-loss", TextSparkline)
        assert chart.view is modal.loss and modal.loss_width == chart.chart_width()
        assert modal.loss is not None and modal.loss.sublabel == "15 min"
        assert modal.loss.value is not None
        await pilot.press("escape")  # Decide later: the run still waits
        screen = pipeline_of(app)
        assert screen.run_state.state == "awaiting_approval"
        stages = screen.query_one(StageList)
        await wait_for(pilot, lambda: not screen.repaints.pending, 5, "the repaint")
        rows = str(stages.render()).splitlines()
        (current,) = [row for row in rows if row.startswith("›")]
        assert "‖ pretrain" in current and "paused" in current, rows
        assert not [row for row in rows if "running" in row], rows
        # The detail pane, the same stage's view, says it too.
        detail = screen.query_one("#detail")
        assert "‖ pretrain — paused" in drawn(detail.render(), detail.size.width)


async def test_a_log_line_is_picked_with_the_keys_and_opened_in_full(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(scenario="gate-fail", speed=300_000.0)
    run_id = await start_run(sim.url, "gate-fail")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await pilot.press("3")  # the Events tab gives its lines the keys
        log = screen.query_one(EventLogView)
        assert screen.focused is log
        await wait_for(pilot, lambda: not screen.repaints.pending, 5, "the log's repaint")
        await pilot.pause()
        lines = str(log.render()).splitlines()
        assert lines and log.selected is not None and log.selected.type == "run.failed"
        # One line up is the one before the end; Enter opens it whole, uncut.
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, EventLineScreen), 5, "the line")
        opened = app.screen
        assert isinstance(opened, EventLineScreen)
        entry = opened.entry
        assert entry.seq == screen.tracker.log.filter(kind=None, query=None)[-2].seq
        assert str(opened.query_one("#event-line-text").render()) == entry.text
        await pilot.press("escape")
        assert app.screen is screen and log.cursor == 1
        await pilot.press("1")  # back on the charts, up/down move the stages again
        assert screen.focused is screen.query_one(StageList)
