"""The telemetry charts have a highlighted one: up/down move it while the charts have the
focus, Enter or a click on a chart asks to open it (`ChartStack.Open`)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.telemetry import TelemetryPanel

from .chart_views import chart_view


class ChartsApp(App[None]):
    """The panel alone, its views answered at once; every `Open` recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def compose(self) -> ComposeResult:
        yield TelemetryPanel(id="telemetry")

    def on_telemetry_panel_changed(self, event: TelemetryPanel.Changed) -> None:
        views = {
            key: chart_view([1.0] * w, key=key, label=key[:10]) for key, w in event.panel.wanted()
        }
        event.panel.show(views, rewinds=0)

    def on_chart_stack_open(self, event: ChartStack.Open) -> None:
        self.opened.append(event.key)


async def test_up_down_move_the_highlight_and_enter_opens_that_chart() -> None:
    app = ChartsApp()
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        charts = app.query_one(ChartStack)
        charts.focus()
        await pilot.pause()
        assert charts.highlighted == "loss"
        await pilot.press("down", "down")
        assert charts.highlighted == charts.keys[2]
        await pilot.press("up")
        assert charts.highlighted == charts.keys[1]
        await pilot.press("enter")
        await pilot.pause()
        assert app.opened == [charts.keys[1]]
        await pilot.press("up", "up", "up")  # held at the first chart
        assert charts.highlighted == "loss"


async def test_the_highlighted_label_is_drawn_reversed_only_while_focused() -> None:
    app = ChartsApp()
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        charts = app.query_one(ChartStack)
        blurred = charts.render_line(0)
        assert not any(seg.style and seg.style.reverse for seg in blurred)
        charts.focus()
        await pilot.pause()
        focused = charts.render_line(0)
        label = next(seg for seg in focused if seg.text.startswith("loss"))
        assert label.style is not None and label.style.reverse
        # The label's second row is reversed too, the range beside it is not.
        under = charts.render_line(1)
        assert [seg.text for seg in under if seg.style and seg.style.reverse] == [
            next(iter(under)).text
        ]
        second = charts.render_line(charts.rows_per_chart())
        assert not any(seg.style and seg.style.reverse for seg in second)


async def test_a_click_on_a_chart_highlights_and_opens_it() -> None:
    app = ChartsApp()
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        charts = app.query_one(ChartStack)
        rows = charts.rows_per_chart()
        await pilot.click(ChartStack, offset=(20, 3 * rows))
        await pilot.pause()
        assert app.opened == [charts.keys[3]]
        assert charts.highlighted == charts.keys[3]
