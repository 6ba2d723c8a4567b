"""The telemetry panel asks for the views it shows, draws what it is handed, and says when
it needs new ones (window, stage, width)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from ito_tui.state.metrics import METRICS
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.chart_text import MARKER_GLYPHS
from ito_tui.tui.widgets.telemetry import TelemetryPanel

from .chart_views import chart_view

RL_KEYS = {m.key for m in METRICS if m.rl and m.chart}
PLAIN_KEYS = [m.key for m in METRICS if m.chart and not m.rl]


class PanelApp(App[None]):
    """The panel alone; each `Changed` is counted and answered with views of its widths."""

    def __init__(self) -> None:
        super().__init__()
        self.changes = 0
        self.asked: list[list[tuple[str, int]]] = []

    def compose(self) -> ComposeResult:
        yield TelemetryPanel(id="telemetry")

    def on_telemetry_panel_changed(self, event: TelemetryPanel.Changed) -> None:
        self.changes += 1
        wanted = event.panel.wanted()
        self.asked.append(wanted)
        views = {
            key: chart_view([1.0] * width, key=key, label=f"L-{key}"[:10]) for key, width in wanted
        }
        event.panel.show(views, rewinds=0)


@asynccontextmanager
async def laid_out_panel(
    width: int, height: int
) -> AsyncIterator[tuple[PanelApp, Pilot[None], TelemetryPanel]]:
    """`PanelApp` running at that size, once laid out: (app, pilot, panel)."""
    app = PanelApp()
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        yield app, pilot, app.query_one(TelemetryPanel)


def caption(app: App[None]) -> str:
    return str(app.query_one("#telemetry-caption", Static).content)


async def test_the_panel_asks_for_its_charts_at_their_widths_and_draws_them() -> None:
    async with laid_out_panel(80, 40) as (app, _pilot, panel):
        assert app.changes >= 1  # laid out: it asked
        wanted = panel.wanted()
        assert [key for key, _ in wanted] == PLAIN_KEYS  # no RL charts outside RLVR
        charts = panel.query_one(ChartStack)
        assert dict(wanted)["loss"] == charts.chart_width() == 80 - 2 - 11 - 15 - 1
        assert charts.chart_text("loss")[0].startswith("L-loss")  # the label came in the view
        assert caption(app) == "window: 15 min (w cycles)"


async def test_the_rl_stage_shows_the_rl_charts_and_asks_for_their_views() -> None:
    async with laid_out_panel(80, 60) as (app, pilot, panel):
        before = app.changes
        panel.stage = "rlvr"
        await pilot.pause()
        await pilot.pause()
        assert app.changes > before
        assert {key for key, _ in app.asked[-1]} >= RL_KEYS
        assert panel.query_one(ChartStack).chart_text("rl_staleness")[0].startswith("L-rl_stale")
        panel.stage = "sft"
        await pilot.pause()
        assert not RL_KEYS & {key for key, _ in panel.wanted()}


async def test_the_window_key_cycles_and_asks_for_new_views() -> None:
    async with laid_out_panel(80, 40) as (app, pilot, panel):
        before = app.changes
        assert panel.window_s == 900.0
        panel.cycle_window()
        await pilot.pause()
        assert panel.window_s == 21_600.0 and app.changes == before + 1
        assert caption(app) == "window: 6 h (w cycles)"
        panel.cycle_window()
        panel.cycle_window()
        await pilot.pause()
        assert panel.window_s == 900.0


async def test_a_wider_terminal_asks_for_wider_views() -> None:
    async with laid_out_panel(80, 40) as (app, pilot, panel):
        narrow = dict(panel.wanted())["loss"]
        before = app.changes
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        await pilot.pause()
        assert app.changes > before
        assert dict(app.asked[-1])["loss"] == narrow + 40
        view = panel.query_one(ChartStack).view("loss")
        assert view is not None and view.width == narrow + 40


async def test_the_caption_counts_rewinds_and_names_the_marks_shown() -> None:
    async with laid_out_panel(120, 40) as (app, pilot, panel):
        width = dict(panel.wanted())["loss"]
        view = chart_view([1.0] * width, markers=[(3, "fault"), (5, "checkpoint"), (7, "rewind")])
        panel.show({"loss": view}, rewinds=2)
        await pilot.pause()
        text = caption(app)
    assert text.startswith("window: 15 min (w cycles) · ↶ 2 rewinds")
    assert f"{MARKER_GLYPHS['fault']} fault" in text
    assert f"{MARKER_GLYPHS['checkpoint']} ckpt" in text
    assert "gate" not in text and "resumed" not in text  # kinds not on any chart


async def test_the_charts_take_their_height_from_the_css_when_a_class_changes_it() -> None:
    """One widget draws every chart; each is as high as `.chart-stack--chart` says, and a
    class that changes that height (as a breakpoint does) lays the charts out again."""
    app = type(
        "TallPanel",
        (PanelApp,),
        {"CSS": "TelemetryPanel.-big ChartStack > .chart-stack--chart { height: 4; }"},
    )()
    async with app.run_test(size=(80, 60)) as pilot:
        await pilot.pause()
        panel = app.query_one(TelemetryPanel)
        charts = panel.query_one(ChartStack)
        assert charts.rows_per_chart() == 2
        assert charts.outer_size.height == 2 * len(PLAIN_KEYS)
        panel.add_class("-big")
        await pilot.pause()
        await pilot.pause()
        assert charts.rows_per_chart() == 4
        assert charts.outer_size.height == 4 * len(PLAIN_KEYS)
        loss = charts.chart_text("loss")
        assert len(loss) == 4 and loss[0].startswith("L-loss")
        # The chart under it starts four rows down, where the stack draws it.
        second = PLAIN_KEYS[1]
        assert charts.render_line(4).text.startswith(f"L-{second}"[:10])
