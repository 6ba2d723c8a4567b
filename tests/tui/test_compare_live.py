"""The reference run against a real desk_sim on 127.0.0.1: the demo's previous happy run
(`--history happy`) picked with `c` on a new run's screen is fetched over HTTP and drawn on
its charts, aligned by tokens seen; `v` diffs the two runs' specs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ito_tui.tui.screens.run_picker import RunPicker
from ito_tui.tui.screens.spec_diff import SpecDiffScreen
from ito_tui.tui.widgets.chart_stack import ChartStack

from .pipeline_live import live_app, shown_pipeline, start_run, wait_for


async def test_the_previous_happy_run_is_drawn_beside_a_new_one(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(history="happy", speed=20_000.0)
    run_id = await start_run(sim.url, "happy")  # 1.5B to RLVR on the first free booking
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        stack = screen.query_one(ChartStack)

        def our_loss() -> bool:
            view = stack.view("loss")
            return view is not None and sum(v is not None for v in view.highs) > 5

        await wait_for(pilot, our_loss, what="this run's loss")
        await pilot.press("c")
        picker = app.screen
        assert isinstance(picker, RunPicker)
        await wait_for(pilot, lambda: picker.loaded, what="the runs read")
        (previous,) = picker.runs
        assert str(previous.state) == "completed" and previous.run_id != run_id
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.reference is not None, what="the reference")

        def drawn() -> bool:
            view = stack.view("loss")
            return view is not None and any(v is not None for v in view.ref_highs)

        await wait_for(pilot, drawn, what="the reference on the loss chart")
        view = stack.view("loss")
        assert view is not None and view.ref_label == f"{previous.run_id} (by tokens)"
        # The previous run (8B) trained past this one's tokens: it has a value where we are.
        assert view.ref_value is not None and view.ref_value - view.ref_value == 0.0
        await pilot.press("v")
        diff = app.screen
        assert isinstance(diff, SpecDiffScreen)
        await wait_for(pilot, lambda: diff.loaded, what="the spec diff")
        marked = {r.field for r in diff.rows if r.differs}
        assert {"booking", "model size"} <= marked and "seq len" not in marked
