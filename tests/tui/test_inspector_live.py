"""The chart inspector on a real desk_sim run over HTTP on 127.0.0.1: open, every key, the
fetches it makes (what the backend was asked), marks, CSV."""

from __future__ import annotations

import asyncio
import csv
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from textual.widgets import TabbedContent

from ito_tui import paths
from ito_tui.client import ItoClient
from ito_tui.contract import TelemetrySample
from ito_tui.format import integer
from ito_tui.state.inspect import SMOOTHING
from ito_tui.tui.screens.event_line import EventLineScreen
from ito_tui.tui.screens.inspector import InspectorScreen
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.plot import InspectorPlot
from ito_tui.tui.widgets.plot_text import exact

from .pipeline_live import live_app, shown_pipeline, start_run, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

SPEED = 20_000.0
"""A 150M run to SFT plays out in a few seconds."""


async def all_samples(url: str, run_id: str) -> list[TelemetrySample]:
    """Every raw sample of the run, page by page."""
    out: list[TelemetrySample] = []
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        since: int | None = None
        while True:
            page = await client.telemetry(run_id, since_seq=since)
            out += page.items
            if page.next_since_seq is None or not page.items:
                return out
            since = page.next_since_seq


async def finished_run(sim_factory: Callable[..., Any], scenario: str = "happy") -> tuple[str, str]:
    """A 150M run to SFT, once it ended: every sample and event is there when the inspector
    opens (opened mid-run, its stage and marks depend on how far the sim clock got)."""
    sim = sim_factory(scenario=scenario, speed=SPEED, approval_speed=None)
    run_id = await start_run(sim.url, scenario, model_size="150M", post_training="sft")
    deadline = time.monotonic() + 60
    async with ItoClient(sim.url, token=SecretStr("s3cret")) as client:
        while not (await client.run(run_id)).terminal:
            assert time.monotonic() < deadline, f"{run_id} ({scenario}) did not end in 60 s"
            await asyncio.sleep(0.05)
    return sim.url, run_id


async def open_inspector(pilot: Any, app: Any, key: str = "loss") -> InspectorScreen:
    """The run screen, then its `key` chart opened with Enter; once the whole run came."""
    screen = await shown_pipeline(pilot, app)
    await wait_for(pilot, lambda: screen.loaded, what="the run's snapshot")
    charts = screen.query_one(ChartStack)
    charts.focus()
    charts.highlight(key)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen), what="the inspector")
    inspector: InspectorScreen = app.screen
    await wait_for(pilot, lambda: inspector.fetches >= 1, what="the whole run's page")
    await pilot.pause()
    return inspector


def readout(inspector: InspectorScreen) -> str:
    rows = inspector.query_one(InspectorPlot).text()
    return rows[0] + "\n" + rows[1]


async def test_the_cursor_names_the_exact_step_and_value_of_a_desk_sim_sample(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    url, run_id = await finished_run(sim_factory)
    app, _client = live_app(url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        inspector = await open_inspector(pilot, app)
        samples = {s.seq: s for s in await all_samples(url, run_id)}
        for _ in range(3):
            await pilot.press("shift+left")
        view = inspector.view
        assert view is not None and view.readout is not None
        column = view.columns[view.cursor]
        assert column is not None and column.last_point is not None
        point = column.last_point
        sample = samples[point.seq]  # a real sample, as the backend stores it
        assert point.step == sample.step and point.value == sample.loss
        text = readout(inspector)
        assert f"step {integer(sample.step)}" in text
        assert f"loss {exact('number', float(sample.loss or 0))}" in text
        assert f"{sample.ts:%Y-%m-%d %H:%M:%S} UTC" in text
        assert view.cursor == view.width - 1 - 30


async def test_zoom_fetches_the_range_and_the_view_narrows_pan_and_reset(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    url, run_id = await finished_run(sim_factory)
    app, client = live_app(url, run_id, tmp_path)
    asked: list[dict[str, Any]] = []
    real = client.telemetry

    async def recording(*args: Any, **kw: Any) -> Any:
        asked.append(kw)
        return await real(*args, **kw)

    client.telemetry = recording  # type: ignore[method-assign]
    async with app.run_test(size=(100, 30)) as pilot:
        inspector = await open_inspector(pilot, app)
        whole = inspector.view
        assert whole is not None
        assert asked[-1]["max_points"] == 2 * inspector.query_one(InspectorPlot).columns()
        await pilot.press("shift+left", "shift+left")
        fetched = inspector.fetches
        await pilot.press("plus")
        zoomed = inspector.view
        assert zoomed is not None
        assert zoomed.x_hi - zoomed.x_lo < (whole.x_hi - whole.x_lo) * 0.6
        await wait_for(pilot, lambda: inspector.fetches > fetched, what="the zoomed page")
        ask = asked[-1]
        assert ask["from_step"] is not None and ask["to_step"] is not None
        assert ask["from_step"] <= zoomed.x_lo and zoomed.x_hi <= ask["to_step"]
        finer = inspector.view
        assert finer is not None
        # The zoomed page has more points in range than the whole-run page had there.
        in_range = [p for p in inspector.points() if finer.x_lo <= p.step <= finer.x_hi]
        assert len(in_range) > sum(c.count for c in whole.columns if c is not None) * 0.3
        await pilot.press("left_square_bracket")
        panned = inspector.view
        assert panned is not None and panned.x_lo < finer.x_lo
        await pilot.press("0")
        back = inspector.view
        assert back is not None
        assert (back.x_lo, back.x_hi) == (whole.x_lo, whole.x_hi)
        assert back.viewport.zoomed is False


async def test_log_y_axis_and_smoothing_keys(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    url, run_id = await finished_run(sim_factory)
    app, _client = live_app(url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        inspector = await open_inspector(pilot, app)
        linear = inspector.view
        assert linear is not None and linear.y_lo is not None and linear.y_hi is not None
        await pilot.press("l")
        log = inspector.view
        assert log is not None and log.viewport.log_y and log.y_hi is not None
        assert math.isclose(log.y_hi, math.log10(linear.y_hi), rel_tol=1e-9)
        assert "log-Y on" in str(inspector.query_one("#inspector-title").render())
        await pilot.press("l", "s", "s")
        smooth = inspector.view
        assert smooth is not None and smooth.viewport.weight == SMOOTHING[2]
        assert smooth.smooth is not None and len(smooth.smooth) == smooth.width
        assert "EMA 0.9" in inspector.query_one(InspectorPlot).text()[-1]
        # The raw line is still drawn under the EMA.
        assert any(c is not None and c.last is not None for c in smooth.columns)
        await pilot.press("x")
        tokens = inspector.view
        assert tokens is not None and tokens.viewport.axis == "tokens"
        await pilot.press("x")
        assert inspector.view is not None and inspector.view.viewport.axis == "time"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, InspectorScreen), what="back")


async def test_c_writes_the_visible_points_as_csv(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    url, run_id = await finished_run(sim_factory)
    app, _client = live_app(url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        inspector = await open_inspector(pilot, app)
        await pilot.press("shift+left", "plus", "plus")
        title = inspector.query_one("#inspector-title")
        await wait_for(  # the zoomed page landed: the title no longer says it is fetching
            pilot, lambda: "fetching" not in str(title.render()), what="the zoomed page"
        )
        assert inspector.status == ""
        visible = inspector.visible_points()
        assert visible
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("c")
        exports = paths.data_dir() / "exports"
        (path,) = exports.glob(f"{run_id}-loss-*.csv")
        assert notes == [f"Wrote {len(visible):,} rows to {path}"]
        with path.open(encoding="utf-8") as f:
            table = list(csv.DictReader(f))
        assert [int(r["step"]) for r in table] == [p.step for p in visible]
        assert [float(r["loss"]) for r in table] == [p.value for p in visible]


async def test_enter_on_a_fault_mark_opens_the_logs_at_its_time(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    url, run_id = await finished_run(sim_factory, "node-failure")
    app, _client = live_app(url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        inspector = await open_inspector(pilot, app)
        view = inspector.view
        assert view is not None
        faults = [(col, m) for col, m in view.marks if m.kind == "fault"]
        assert faults, view.marks
        col, fault = faults[0]
        await pilot.press(*(["left"] * (view.cursor - col)))
        assert inspector.view is not None and inspector.view.readout is not None
        assert fault in inspector.view.readout.marks
        assert fault.label in readout(inspector).replace("…", "") or "fault" in readout(inspector)
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, InspectorScreen), what="back")
        tabs = app.screen.query_one("#tabs", TabbedContent)
        await wait_for(pilot, lambda: tabs.active == "tab-logs", what="the Logs tab")
        assert not isinstance(app.screen, EventLineScreen)


async def test_a_zoom_keeps_the_cursor_on_the_step_it_was_on(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    # Zoom in around the cursor: the operator's point stays under it, before and after the
    # finer page arrives (the x range is re-centred, the cursor's column and step kept).
    url, run_id = await finished_run(sim_factory)
    app, _client = live_app(url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        inspector = await open_inspector(pilot, app)
        await pilot.press("shift+left", "shift+left", "shift+left")
        view = inspector.view
        assert view is not None
        column = view.cursor
        x = view.x_lo + (column + 0.5) / view.width * (view.x_hi - view.x_lo)
        title = inspector.query_one("#inspector-title")
        for _ in range(3):
            await pilot.press("plus")
            await wait_for(  # the finer page, if the zoom asked for one
                pilot, lambda: "fetching" not in str(title.render()), what="the zoomed page"
            )
            zoomed = inspector.view
            assert zoomed is not None and zoomed.cursor == column
            span = zoomed.x_hi - zoomed.x_lo
            at = zoomed.x_lo + (column + 0.5) / zoomed.width * span
            assert abs(at - x) <= span / zoomed.width * 1.5, (at, x, zoomed.x_lo, zoomed.x_hi)
