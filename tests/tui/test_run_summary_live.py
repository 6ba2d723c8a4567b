"""The run summary panel and "New run from this spec" (`n`) against desk_sim on 127.0.0.1:
a happy run and a failed gate end with their summary on the run screen; `n` there and on
the runs list opens the spec form filled with the run's spec (every field), on its booking
when free, else after a booking picker; nothing is sent before the form's confirm."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from textual.widgets import OptionList

from ito_tui.client import ItoClient
from ito_tui.contract import Run
from ito_tui.tui.forms import values_of
from ito_tui.tui.screens.booking_choice import BookingChoice
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.screens.spec_form import SpecFormScreen
from ito_tui.tui.widgets.gate_banner import GateBanner
from ito_tui.tui.widgets.run_summary import RunSummaryPanel

from .pipeline_live import live_app, shown_pipeline, start_run, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

SPEED = 300_000.0
PANEL_WORDS = (
    "Run summary · completed", "actual", "estimate", "wall time",
    "GPU-hours", "cost", "rollbacks", "pretrain", "gate✓",
)  # fmt: skip


async def ended(url: str, run_id: str) -> Run:
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        for _ in range(1200):
            if (run := await client.run(run_id)).terminal:
                return run
            await asyncio.sleep(0.05)
    raise AssertionError(f"{run_id} did not end")


async def run_count(url: str) -> int:
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        return len(await client.runs())


def form_of(app: Any) -> SpecFormScreen:
    screen = app.screen
    assert isinstance(screen, SpecFormScreen), app.screen_stack
    return screen


async def test_a_happy_run_ends_with_its_summary_and_n_fills_the_form(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(scenario="happy", speed=SPEED)
    run_id = await start_run(sim.url, "happy", post_training="sft")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        panel = screen.query_one(RunSummaryPanel)
        assert panel.end is None or screen.run_state.terminal
        await wait_for(pilot, lambda: panel.end is not None, 120, "the run's summary")
        # The proposals and the newest sample were read: rollbacks are known (none).
        known = lambda: panel.end is not None and panel.end.rollbacks == ()  # noqa: E731
        await wait_for(pilot, known, what="the rollbacks")
        end = panel.end
        assert end is not None and end.outcome == "completed" and panel.display
        assert end.usd_p50 is not None and end.wall_s is not None and end.gpu_hours
        shown = str(panel.render())
        for words in PANEL_WORDS:
            assert words in shown, words
        assert screen.query_one("#stages").display  # the stage list stays
        before = await run_count(sim.url)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen), what="the form")
        form = form_of(app)
        run = await ended(sim.url, run_id)
        # Every field is the run's, on its booking (free now that the run ended).
        assert form.booking.booking_id == run.booking_id
        assert form.values() == values_of(run.spec)
        assert form.values().post_training == "sft" and form.values().seq_len == "8192"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SpecFormScreen), what="back")
        assert await run_count(sim.url) == before  # nothing was sent


async def test_a_failed_gate_summary_and_its_banner_name_the_key(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(scenario="gate-fail", speed=SPEED)
    run_id = await start_run(sim.url, "gate-fail")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await shown_pipeline(pilot, app)
        panel = screen.query_one(RunSummaryPanel)
        await wait_for(pilot, lambda: panel.end is not None, 120, "the run's summary")
        end = panel.end
        assert end is not None and end.outcome == "gate_failed"
        assert end.failed_gate is not None and str(end.failed_gate.stage) == "mid_train"
        shown = str(panel.render())
        assert "Run summary · gate failed: mid-train" in shown
        assert "gate✗" in shown and "short by" in shown
        banner = str(screen.query_one(GateBanner).render())
        assert "start a new run" in banner and "(n: from this spec)" in banner
        assert screen.check_action("new_run", ()) is True
        assert screen.check_action("cancel_run", ()) is False


async def test_n_on_the_runs_list_fills_the_form_after_a_picker_when_the_booking_is_busy(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(scenario="happy", speed=SPEED)
    done_id = await start_run(sim.url, "happy", post_training="dpo")
    done = await ended(sim.url, done_id)
    # A second run now holds the first one's booking (the first free one again), slowly.
    busy_id = await start_run(sim.url, "happy", time_scale=1.0)
    app, _client = live_app(sim.url, "runs", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_for(pilot, lambda: runs.fetches > 0, what="the list")
        before = await run_count(sim.url)
        # The busy run has not ended: its `n` is not offered; the finished one's is.
        table = runs.query_one("DataTable")
        for _ in range(len(runs.runs)):
            if runs.selected_run_id() == busy_id:
                assert runs.check_action("new_run", ()) is False
            if runs.selected_run_id() == done_id:
                break
            await pilot.press("down")
        assert runs.selected_run_id() == done_id, table
        await pilot.press("n")
        async with ItoClient(sim.url, token=SecretStr("s3cret")) as client:
            holder = (await client.booking(done.booking_id)).active_run_id
        assert holder == busy_id
        # Its booking is busy: the picker first, then the form on the booking picked.
        await wait_for(pilot, lambda: isinstance(app.screen, BookingChoice), what="the picker")
        picker = app.screen
        assert isinstance(picker, BookingChoice)
        assert picker.bookings and done.booking_id not in {b.booking_id for b in picker.bookings}
        assert "busy" in picker.why and busy_id in picker.why
        picker.query_one(OptionList).highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen), what="the form")
        form = form_of(app)
        assert form.booking.booking_id == picker.bookings[0].booking_id
        # Every field filled from the finished run's spec (data ref included).
        assert form.values() == values_of(done.spec)
        assert form.values().data_ref == done.spec.data_ref
        assert form.values().post_training == "dpo"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SpecFormScreen), what="back")
        assert await run_count(sim.url) == before
