"""The sparkline and the telemetry panel repaint only what changed on screen."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.geometry import Region

from ito_tui.state import TelemetryBank
from ito_tui.tui.widgets.chart_text import _bounded, _filled, _level
from ito_tui.tui.widgets.sparkline import (
    LOWER,
    MARKER,
    SHADE,
    ChartData,
    TextSparkline,
    chart_rows,
    value_span,
)
from ito_tui.tui.widgets.telemetry import METRICS, TelemetryCharts, TelemetryPanel

from .shell_helpers import screen_text


class Source:
    """A chart source whose columns and value the test sets."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last = 2.0
        self.value = 2.0

    def __call__(self, width: int) -> ChartData:
        highs: list[float | None] = [1.0 + c % 3 for c in range(width - 1)]
        if self.first is not None:
            highs[0] = self.first
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


def reference_chart_rows(data: ChartData, rows: int, floor: float | None = None) -> list[str]:
    """`chart_rows` as first written: cell by cell, no caching, no inlining."""
    width = len(data.highs)
    lo = data.vmin if floor is None else min(floor, data.vmin if data.vmin is not None else floor)
    hi = data.vmax
    grid = [[" "] * width for _ in range(rows)]
    if lo is None or hi is None:
        return ["".join(r) for r in grid]
    levels = rows * 8
    lows, highs = _filled(data)
    for col in range(width):
        top_v, bot_v = highs[col], lows[col]
        if top_v is None:
            continue
        top_l = _bounded(_level(top_v, lo, hi, levels), levels)
        bot_l = _bounded(_level(bot_v if bot_v is not None else top_v, lo, hi, levels), levels)
        top = max(1, min(levels, round(top_l)))
        solid = min(top, int(bot_l))
        for r in range(rows):
            cell_lo, cell_hi = r * 8, r * 8 + 8
            if top <= cell_lo:
                break
            if top < cell_hi:
                ch = LOWER[top - cell_lo]
            elif solid >= cell_hi or top - solid < 8:
                ch = "█"
            else:
                ch = SHADE
            grid[rows - 1 - r][col] = ch
    for col in data.markers:
        if 0 <= col < width:
            grid[0][col] = MARKER
    return ["".join(r) for r in grid]


@st.composite
def chart_data(draw: st.DrawFn) -> ChartData:
    finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    column = st.none() | st.tuples(finite, st.floats(0, 1e3) | st.just(0.0))
    cols = draw(st.lists(column, max_size=70))
    lows = [None if c is None else c[0] for c in cols]
    highs = [None if c is None else c[0] + c[1] for c in cols]
    known = [v for v in lows + highs if v is not None]
    vmin = draw(st.none() | st.just(min(known, default=0.0)) | finite)
    vmax = draw(st.none() | st.just(max(known, default=0.0)) | finite)
    markers = draw(st.lists(st.integers(-2, len(cols) + 2), max_size=3))
    return ChartData(lows=lows, highs=highs, vmin=vmin, vmax=vmax, markers=markers)


@settings(max_examples=300, deadline=None)
@given(data=chart_data(), rows=st.integers(1, 4), floor=st.none() | st.sampled_from([0.0, -5.0]))
# A value far outside a subnormal span: its level divides to infinity (found by hypothesis).
@example(
    data=ChartData(lows=[1.0, -1.0], highs=[1.0, -1.0], vmin=0.0, vmax=5e-324), rows=2, floor=None
)
def test_chart_rows_draws_what_the_cell_by_cell_reference_draws(
    data: ChartData, rows: int, floor: float | None
) -> None:
    assert chart_rows(data, rows, floor) == reference_chart_rows(data, rows, floor)


async def test_a_row_with_changes_far_apart_is_one_region() -> None:
    """Textual writes every region of a row from the widget's left edge: one per row."""
    source = Source()
    app = OneChart(source)
    async with app.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)
        calls = spy_refreshes(chart)
        source.first = source.last = 4.0  # the first and the last column rise
        chart.refresh_if_changed()
        assert len(calls) == 1 and calls[0]
        rows = [region.y for region in calls[0]]
        assert len(rows) == len(set(rows)), calls[0]
        first_col = TextSparkline.LABEL_WIDTH
        assert any(r.x <= first_col < r.right and r.right >= first_col + chart.chart_width() - 1
                   for r in calls[0])  # fmt: skip


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [
        ("96.2%", "96.7%", "96.2–96.7%"),
        ("75 GiB", "76 GiB", "75–76 GiB"),
        ("7.8K", "8.2K", "7.8–8.2K"),
        ("$234", "$394", "$234–$394"),  # a shared prefix stays on both ends
        ("2.48", "3.05", "2.48–3.05"),
        ("1.0e-03", "2.0e-03", "1.0e-03–2.0e-03"),  # digits are never a unit
        ("12 st", "3.4K st", "12 st–3.4K st"),  # a unit is shared only after two numbers
    ],
)
def test_a_range_writes_a_shared_unit_once(low: str, high: str, shown: str) -> None:
    assert value_span(low, high) == shown


class SpendChart(App[None]):
    """One chart 50 cells wide (a stats column of 12), money formatted as the panel does."""

    CSS = "TextSparkline { width: 50; }"

    def __init__(self, low: float, high: float, compact: bool) -> None:
        super().__init__()
        self.data = ChartData(lows=[low, high], highs=[low, high], value=high, vmin=low, vmax=high)
        self.compact = compact

    def compose(self) -> ComposeResult:
        spend = next(m for m in METRICS if m.key == "spend_usd")
        yield TextSparkline(
            "spend",
            lambda width: self.data,
            fmt=spend.fmt,
            compact=spend.compact if self.compact else None,
        )


@pytest.mark.parametrize(
    ("low", "high", "compact", "shown", "not_shown"),
    [
        (5_000, 8_500, True, "$5.0–$8.5K", "$8,50 "),  # was cut to `$5,000–$8,50`
        (5_000, 8_500, False, "$5,000–$8,5…", "$8,50 "),  # no shorter form: cut, visibly
        (234, 394, True, "$234–$394", "K"),  # fits: the exact form stays
    ],
)
async def test_a_figure_too_wide_for_the_stats_column_is_shortened_not_cut(
    low: float, high: float, compact: bool, shown: str, not_shown: str
) -> None:
    async with SpendChart(low, high, compact).run_test(size=(60, 4)) as pilot:
        text = screen_text(pilot)
    assert shown in text
    assert not_shown not in text
    assert f"${high:,.0f}" in text  # the latest value fits as it is
