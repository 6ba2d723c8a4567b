"""The sparkline and the telemetry panel repaint only what changed on screen."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Region

from ito_tui.state import TelemetryBank
from ito_tui.tui.widgets.sparkline import ChartData, TextSparkline
from ito_tui.tui.widgets.telemetry import TelemetryCharts, TelemetryPanel

from .shell_helpers import screen_text


class Source:
    """A chart source whose columns and value the test sets."""

    def __init__(self) -> None:
        self.last = 2.0
        self.value = 2.0

    def __call__(self, width: int) -> ChartData:
        highs: list[float | None] = [1.0 + c % 3 for c in range(width - 1)]
        highs.append(self.last)
        return ChartData(lows=highs, highs=highs, value=self.value, vmin=0.0, vmax=4.0)


class OneChart(App[None]):
    def __init__(self, source: Source) -> None:
        super().__init__()
        self.source = source

    def compose(self) -> ComposeResult:
        yield TextSparkline("loss", self.source, id="chart")


def spy_refreshes(widget: Any) -> list[tuple[Region, ...]]:
    """Record the regions of every `refresh` of `widget` (() is the whole widget)."""
    calls: list[tuple[Region, ...]] = []
    real = widget.refresh

    def refresh(*regions: Region, **kw: Any) -> Any:
        calls.append(regions)
        return real(*regions, **kw)

    widget.refresh = refresh
    return calls


async def test_a_chart_repaints_only_the_cells_that_changed() -> None:
    source = Source()
    app = OneChart(source)
    async with app.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)
        calls = spy_refreshes(chart)
        chart.refresh_if_changed()
        assert calls == []  # nothing it draws changed: no repaint at all
        source.last = 4.0  # the last column rises ...
        source.value = 3.0  # ... and the value with it
        chart.refresh_if_changed()
        assert len(calls) == 1 and calls[0], calls  # some regions, not the whole widget
        width = chart.chart_width()
        value_x = TextSparkline.LABEL_WIDTH + width + 1
        for region in calls[0]:
            assert region.height == 1
            # the last chart column, or the value on the first row: nothing else
            assert region.x >= TextSparkline.LABEL_WIDTH + width - 1, region
            assert region.x + region.width <= value_x + 4, region
        await pilot.pause()
        shown = screen_text(pilot)
    fresh = OneChart(source)
    async with fresh.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        assert screen_text(pilot) == shown  # the partly repainted chart reads as a new one


async def test_a_sample_inside_the_last_column_repaints_no_other_column() -> None:
    """With the 15-min window's fixed grid, a new sample moves nothing but the last column."""
    bank = TelemetryBank()
    series = bank["spend_usd"]
    for i in range(3_000):
        series.append(float(i), 100.0 + abs(i % 200 - 100))  # a triangle: 100 to 200
    panel = TelemetryPanel(TelemetryCharts(bank), id="telemetry")

    class Panel(App[None]):
        def compose(self) -> ComposeResult:
            yield panel

    async with Panel().run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        chart = panel.query_one("#spark-spend_usd", TextSparkline)
        width = chart.chart_width()
        step = 900.0 / width
        calls = spy_refreshes(chart)
        x = float(int(2_999 / step) * step) + step - 0.5  # late in the last column's cell
        series.append(x, 150.0)  # no new extreme
        panel.version += 1
        await pilot.pause()
        # The first column (the window's start slides through it) and the last may change.
        inner = set(range(TextSparkline.LABEL_WIDTH + 1, TextSparkline.LABEL_WIDTH + width - 1))
        assert calls, "the new sample changed nothing on screen"
        for regions in calls:
            assert regions, "the whole chart was repainted"
            for region in regions:
                assert not set(range(region.x, region.right)) & inner, region


async def test_a_repaint_reads_the_source_once_and_draws_what_it_compared() -> None:
    source = Source()
    reads = 0

    def counting(width: int) -> ChartData:
        nonlocal reads
        reads += 1
        return source(width)

    app = OneChart(source)
    async with app.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)
        chart.source = counting
        source.last, source.value = 4.0, 3.0
        chart.refresh_if_changed()
        await pilot.pause()
        assert reads == 1, "the repaint read the source again after refresh_if_changed"
        shown = screen_text(pilot)
        chart.refresh()  # a whole repaint (new window, label, theme) reads it once more
        await pilot.pause()
        assert reads == 2 and screen_text(pilot) == shown


async def test_a_theme_change_recolours_the_chart() -> None:
    app = OneChart(Source())
    async with app.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)

        def chart_colour() -> object:
            segment = chart.render_line(0)._segments[1]  # label, chart, value
            return segment.style.color if segment.style else None

        before = chart_colour()
        assert app.theme != "nord"
        app.theme = "nord"  # another accent colour
        await pilot.pause()
        assert chart_colour() != before
