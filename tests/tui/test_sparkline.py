"""The sparkline draws the `ChartView` it is given, and repaints only what changed on screen."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot

from ito_tui.describe import MFU_UNMEASURED
from ito_tui.state import RunTracker
from ito_tui.state.views import ChartView, MarkerKind
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.chart_text import (
    LOWER,
    MARKER_GLYPHS,
    SHADE,
    chart_rows,
    drawn_kinds,
    value_span,
)
from ito_tui.tui.widgets.sparkline import TextSparkline, chart_lines, chart_width
from ito_tui.tui.widgets.telemetry import TelemetryPanel

from .chart_views import chart_view
from .shell_helpers import screen_text


def columns(width: int, first: float | None = None, last: float = 2.0) -> ChartView:
    """A chart whose first and last columns the test sets, over a fixed 0–4 scale."""
    highs: list[float | None] = [1.0 + c % 3 for c in range(width - 1)]
    if first is not None:
        highs[0] = first
    highs.append(last)
    return chart_view(highs, value=last, vmin=0.0, vmax=4.0)


class OneChart(App[None]):
    CSS = "TextSparkline { height: 2; }"

    def __init__(self, view: ChartView | None = None) -> None:
        super().__init__()
        self.first_view = view

    def compose(self) -> ComposeResult:
        yield TextSparkline(self.first_view, id="chart")


def styled_chart(view: ChartView, css: str) -> OneChart:
    """`OneChart` with its own stylesheet (an app's CSS is per class)."""
    app: OneChart = type("OneChart", (OneChart,), {"CSS": css})(view)
    return app


def rows_of(chart: TextSparkline) -> list[str]:
    """What the chart shows, one string per row."""
    return [chart.render_line(y).text for y in range(chart.size.height)]


def spy_refreshes(widget: Any) -> list[tuple[Region, ...]]:
    """Record the regions of every `refresh` of `widget` (() is the whole widget)."""
    calls: list[tuple[Region, ...]] = []
    real = widget.refresh

    def refresh(*regions: Region, **kw: Any) -> Any:
        calls.append(regions)
        return real(*regions, **kw)

    widget.refresh = refresh
    return calls


async def drawn_and_spied(
    pilot: Pilot[None],
) -> tuple[TextSparkline, int, list[tuple[Region, ...]]]:
    """The app's chart once it has drawn a full-width `columns` view, its width, and the
    regions of its refreshes from then on."""
    chart = pilot.app.query_one(TextSparkline)
    width = chart.chart_width()
    chart.view = columns(width)
    await pilot.pause()
    return chart, width, spy_refreshes(chart)


async def test_a_chart_draws_its_view_labels_values_and_range() -> None:
    view = chart_view(
        [0.5, 0.75, 0.9], unit="fraction", floor=0.0, label="goodput", sublabel="ML prod."
    )
    async with OneChart().run_test(size=(60, 4)) as pilot:
        chart = pilot.app.query_one(TextSparkline)
        assert set("".join(rows_of(chart))) == {" "}  # no view: nothing drawn
        chart.view = view
        await pilot.pause()
        top, bottom = rows_of(chart)
        width = chart.chart_width()
    assert top.startswith("goodput") and bottom.startswith("ML prod.")
    assert top.split()[-1] == "90.0%" and bottom.split()[-1] == "50.0–90.0%"
    cells = top[TextSparkline.LABEL_WIDTH :][:width] + bottom[TextSparkline.LABEL_WIDTH :][:width]
    assert set(cells.strip()) <= set(LOWER) | {SHADE} and cells.strip()
    assert view.width == 3 and width > 3  # an older, narrower view: the newest columns right
    assert top[TextSparkline.LABEL_WIDTH : TextSparkline.LABEL_WIDTH + width - 3].strip() == ""


async def test_a_note_replaces_the_value() -> None:
    view = chart_view([1.0, 2.0], key="mfu", unit="fraction", note="fp8")
    async with OneChart(view).run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        top = rows_of(pilot.app.query_one(TextSparkline))[0]
        assert top.split()[-1] == "fp8" and "%" not in top


@pytest.mark.parametrize("width", [50, 80])
def test_a_note_too_long_for_the_value_column_is_written_whole_over_an_empty_chart(
    width: int,
) -> None:
    view = chart_view([None, None], key="mfu", unit="fraction", note=MFU_UNMEASURED)
    top, bottom = chart_lines(view, width, 2)
    columns = top[TextSparkline.LABEL_WIDTH :]
    assert columns.startswith(MFU_UNMEASURED) and columns.count(MFU_UNMEASURED) == 1
    assert len(top) == len(bottom) == width and "…" not in top
    # Drawn again from the cells a chart stack keeps: the same, not the note twice.
    end = TextSparkline.LABEL_WIDTH + chart_width(width)
    kept = [row[TextSparkline.LABEL_WIDTH : end] for row in (top, bottom)]
    assert chart_lines(view, width, 2, kept) == [top, bottom]


def test_a_note_too_long_for_a_narrow_chart_is_split_between_its_words() -> None:
    # The run screen's chart pane at 80x24: 14 columns and a 12-cell value column; the
    # note was cut to `not measured…` over the columns.
    view = chart_view([None, None], key="mfu", unit="fraction", note=MFU_UNMEASURED)
    top, _ = chart_lines(view, 38, 2)
    assert chart_width(38) < len(MFU_UNMEASURED) and "…" not in top
    assert top[TextSparkline.LABEL_WIDTH :].split() == MFU_UNMEASURED.split()
    assert top.rstrip().endswith("(fp8)")  # its last word in the value column


async def test_a_chart_repaints_only_the_cells_that_changed() -> None:
    async with OneChart().run_test(size=(60, 4)) as pilot:
        chart, width, calls = await drawn_and_spied(pilot)
        chart.view = columns(width)  # equal view: nothing to repaint
        assert calls == []
        chart.view = columns(width, last=4.0)  # the last column rises, and the value with it
        assert len(calls) == 1 and calls[0], calls  # some regions, not the whole widget
        value_x = TextSparkline.LABEL_WIDTH + width + 1
        for region in calls[0]:
            assert region.height == 1
            # the last chart column, or the value on the first row: nothing else
            assert region.x >= TextSparkline.LABEL_WIDTH + width - 1, region
            assert region.x + region.width <= value_x + 4, region
        await pilot.pause()
        shown = screen_text(pilot)
    fresh = OneChart(columns(width, last=4.0))
    async with fresh.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        assert screen_text(pilot) == shown  # the partly repainted chart reads as a new one


async def test_a_row_with_changes_far_apart_is_one_region() -> None:
    """Textual writes every region of a row from the widget's left edge: one per row."""
    async with OneChart().run_test(size=(60, 4)) as pilot:
        chart, width, calls = await drawn_and_spied(pilot)
        chart.view = columns(width, first=4.0, last=4.0)  # the first and the last column rise
        assert len(calls) == 1 and calls[0]
        rows = [region.y for region in calls[0]]
        assert len(rows) == len(set(rows)), calls[0]
        first_col = TextSparkline.LABEL_WIDTH
        assert any(r.x <= first_col < r.right and r.right >= first_col + width - 1
                   for r in calls[0])  # fmt: skip


async def test_a_sample_inside_the_last_column_repaints_no_other_column() -> None:
    """With the 15-min window's fixed grid, a new sample moves nothing but the last column."""
    tracker = RunTracker("run_chart")
    series = tracker.bank["spend_usd"]
    for i in range(3_000):
        series.append(float(i), 100.0 + abs(i % 200 - 100))  # a triangle: 100 to 200
    panel = TelemetryPanel(id="telemetry")

    def paint() -> None:
        views = {k: tracker.chart(k, w, panel.window_s) for k, w in panel.wanted()}
        panel.show(views, rewinds=tracker.rewinds)

    class Panel(App[None]):
        def compose(self) -> ComposeResult:
            yield panel

        def on_telemetry_panel_changed(self) -> None:
            paint()

    async with Panel().run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        charts = panel.query_one(ChartStack)
        width = charts.chart_width()
        view = charts.view("spend_usd")
        assert view is not None and view.width == width
        rows = charts.rows_per_chart()
        top = charts.keys.index("spend_usd") * rows
        step = 900.0 / width
        calls = spy_refreshes(charts)
        x = float(int(2_999 / step) * step) + step - 0.5  # late in the last column's cell
        series.append(x, 150.0)  # no new extreme
        paint()
        await pilot.pause()
        # The first column (the window's start slides through it) and the last may change.
        inner = set(range(TextSparkline.LABEL_WIDTH + 1, TextSparkline.LABEL_WIDTH + width - 1))
        assert calls, "the new sample changed nothing on screen"
        for regions in calls:
            assert regions, "the whole chart was repainted"
            for region in regions:
                assert not set(range(region.x, region.right)) & inner, region
                assert top <= region.y < top + rows, region  # the spend chart's rows only


async def test_a_chart_as_tall_as_its_css_draws_that_many_rows() -> None:
    view = chart_view([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], label="loss", sublabel="SFT")
    app = styled_chart(view, "TextSparkline { height: 4; }")
    async with app.run_test(size=(60, 6)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)
        rows = rows_of(chart)
        start = TextSparkline.LABEL_WIDTH + chart.chart_width() - 8
    assert len(rows) == 4
    cells = [row[start : start + 8] for row in rows]
    # 32 levels over 4 rows: the lowest column a sliver, the highest full height.
    assert [c[0] for c in cells] == [" ", " ", " ", LOWER[1]]
    assert [c[-1] for c in cells] == ["█"] * 4
    assert rows[0].startswith("loss") and rows[1].startswith("SFT")
    assert rows[2][: TextSparkline.LABEL_WIDTH].strip() == ""  # labels on rows 0–1 only
    assert rows[0].split()[-1] == "7.00" and rows[1].split()[-1] == "0–7.00"


async def test_markers_are_drawn_by_kind_with_glyphs_of_their_own() -> None:
    kinds: tuple[MarkerKind, ...] = ("rewind", "fault", "recovery", "checkpoint", "gate")
    view = chart_view(
        [1.0] * 12, markers=[(2 * i, kind) for i, kind in enumerate(kinds)] + [(10, "fault")]
    )
    assert len(set(MARKER_GLYPHS.values())) == len(kinds)  # told apart without colour
    async with OneChart(view).run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        chart = pilot.app.query_one(TextSparkline)
        width = chart.chart_width()
        top = rows_of(chart)[0][TextSparkline.LABEL_WIDTH : TextSparkline.LABEL_WIDTH + width]
        segments = list(chart.render_line(0))
    cells = top[width - 12 :]  # the 12 columns, newest on the right
    assert [cells[2 * i] for i in range(5)] == [MARKER_GLYPHS[k] for k in kinds]
    assert cells[10] == MARKER_GLYPHS["fault"]
    styles = {s.text: s.style for s in segments if s.text in MARKER_GLYPHS.values()}
    assert styles[MARKER_GLYPHS["fault"]] != styles[MARKER_GLYPHS["checkpoint"]]  # and colour


def test_the_most_urgent_marker_of_a_column_shows() -> None:
    view = chart_view([1.0, 1.0], markers=[(0, "checkpoint"), (0, "fault"), (1, "gate"),
                                           (1, "rewind"), (1, "recovery")])  # fmt: skip
    top, _bottom = chart_rows(view, 2)
    assert top == MARKER_GLYPHS["fault"] + MARKER_GLYPHS["rewind"]


def test_a_checkpoint_never_cuts_a_bar_but_a_fault_does() -> None:
    full = chart_view([0.0, 4.0, 4.0, 4.0], markers=[(1, "checkpoint"), (2, "fault"),
                                                     (0, "checkpoint")])  # fmt: skip
    top, _bottom = chart_rows(full, 2)
    glyph = MARKER_GLYPHS
    assert top == glyph["checkpoint"] + "█" + glyph["fault"] + "█"  # column 0 had room


async def test_a_theme_change_recolours_the_chart() -> None:
    app = OneChart(columns(40))
    async with app.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)

        def chart_colour() -> object:
            segment = list(chart.render_line(0))[1]  # label, chart, value
            return segment.style.color if segment.style else None

        before = chart_colour()
        assert app.theme != "nord"
        app.theme = "nord"  # another accent colour
        await pilot.pause()
        assert chart_colour() != before


def reference_chart_rows(view: ChartView, rows: int) -> list[str]:
    """`chart_rows` as first written: cell by cell, no caching, no inlining."""
    width = len(view.highs)
    floor = view.floor
    lo = view.vmin if floor is None else min(floor, view.vmin if view.vmin is not None else floor)
    hi = view.vmax
    grid = [[" "] * width for _ in range(rows)]
    for marker in view.markers:
        if 0 <= marker.column < width:
            grid[0][marker.column] = MARKER_GLYPHS["rewind"]
    if lo is None or hi is None:
        return ["".join(r) for r in grid]
    levels = rows * 8

    def level(value: float) -> float:
        raw = (1 if value == 0 else levels / 2) if hi <= lo else (value - lo) / (hi - lo) * levels
        return min(max(raw, -1.0), levels + 1.0)

    lows, highs = list(view.lows), list(view.highs)
    odd = view.odd
    drawn = [i for i in range(width) if highs[i] is not None or (i < len(odd) and odd[i])]
    pairs = list(pairwise(drawn))
    spacing = sorted(b - a - 1 for a, b in pairs)[len(pairs) // 2] if pairs else 0
    for a, b in pairs:
        if b - a - 1 <= max(1, 2 * spacing):  # a silence longer than that stays blank
            for i in range(a + 1, b):
                lows[i] = highs[i] = highs[i - 1]
    for col in range(width):
        top_v, bot_v = highs[col], lows[col]
        if top_v is None:
            continue
        top = max(1, min(levels, round(level(top_v))))
        solid = min(top, int(level(bot_v if bot_v is not None else top_v)))
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
    for marker in view.markers:  # over the bars
        if 0 <= marker.column < width:
            grid[0][marker.column] = MARKER_GLYPHS["rewind"]
    return ["".join(r) for r in grid]


@st.composite
def views(draw: st.DrawFn) -> ChartView:
    finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    column = st.none() | st.tuples(finite, st.floats(0, 1e3) | st.just(0.0))
    cols = draw(st.lists(column, max_size=70))
    lows = [None if c is None else c[0] for c in cols]
    highs = [None if c is None else c[0] + c[1] for c in cols]
    known = [v for v in lows + highs if v is not None]
    vmin = draw(st.none() | st.just(min(known, default=0.0)) | finite)
    vmax = draw(st.none() | st.just(max(known, default=0.0)) | finite)
    rewinds = draw(st.lists(st.integers(-2, len(cols) + 2), max_size=3))
    floor = draw(st.none() | st.sampled_from([0.0, -5.0]))
    return chart_view(
        lows, highs, vmin=vmin, vmax=vmax, floor=floor, markers=[(c, "rewind") for c in rewinds]
    )


@settings(max_examples=300, deadline=None)
@given(view=views(), rows=st.integers(1, 4))
# A value far outside a subnormal span: its level divides to infinity (found by hypothesis).
@example(view=chart_view([1.0, -1.0], vmin=0.0, vmax=5e-324), rows=2)
def test_chart_rows_draws_what_the_cell_by_cell_reference_draws(view: ChartView, rows: int) -> None:
    assert chart_rows(view, rows) == reference_chart_rows(view, rows)


def test_chart_keeps_a_dip_inside_a_bucket_visible() -> None:
    flat = chart_view([5, 5, 5, 5], vmin=1, vmax=5)
    dip = chart_view([5, 1, 5, 5], [5, 5, 5, 5], vmin=1, vmax=5)
    assert chart_rows(flat, 2) != chart_rows(dip, 2)
    top, _bottom = chart_rows(dip, 2)
    assert top[1] == SHADE and top[0] == "█"  # only the bucket's maximum reaches up there


def test_chart_fills_sparse_gaps() -> None:
    top, bottom = chart_rows(chart_view([1, None, None, 3], markers=[(2, "rewind")]), 2)
    assert top[2] == MARKER_GLYPHS["rewind"]
    assert " " not in bottom  # no comb of gaps between samples
    sparse = [1.0, None, None, 2.0, None, None, None, 1.5, None, None, 2.5]
    assert " " not in chart_rows(chart_view(sparse), 2)[1]  # every hole within twice the usual


def test_a_silence_in_a_dense_window_stays_blank_not_a_plateau_of_the_spike() -> None:
    """A loss spike pauses the run for a decision: no sample until it resumes. The pause
    is drawn empty; repeating the spike's column drew the loss high for the whole pause."""
    loss = [3.0, 2.8, 2.6, 2.5, 2.4, 2.3, 3.0, None, None, None, None, None, 2.2, 2.2, 2.1]
    top, bottom = chart_rows(chart_view(loss), 2)
    assert bottom[7:12] == " " * 5 and top[7:12] == " " * 5
    assert bottom[6] != " " and bottom[12] != " "


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [
        ("96.2%", "96.7%", "96.2–96.7%"),
        ("75 GiB", "76 GiB", "75–76 GiB"),
        ("7.8K", "8.2K", "7.8–8.2K"),
        ("$234", "$394", "$234–$394"),  # money: each end whole...
        ("$7.8K", "$8.2K", "$7.8K–$8.2K"),  # ...its magnitude too (it read `$7.8–$8.2K`)
        ("2.48", "3.05", "2.48–3.05"),
        ("1.0e-03", "2.0e-03", "1.0e-03–2.0e-03"),  # digits are never a unit
        ("12 st", "3.4K st", "12 st–3.4K st"),  # a unit is shared only after two numbers
    ],
)
def test_a_range_writes_a_shared_unit_once(low: str, high: str, shown: str) -> None:
    assert value_span(low, high) == shown


@pytest.mark.parametrize(
    ("values", "unit", "shown"),
    [([0.0, 0.0, 0.0], "number", "flat 0"), ([0.86, 0.86], "fraction", "flat 86.0%")],
)
def test_a_flat_window_says_flat_not_a_range_of_one_value(
    values: list[float], unit: str, shown: str
) -> None:
    # The silent run's snapshot read `0–0` and `86.0–86.0%` under one-level charts.
    span = chart_lines(chart_view(values, unit=unit), 60, 2)[1]
    assert span.rstrip().endswith(shown)
    assert "–" not in span


@pytest.mark.parametrize(
    ("values", "unit", "width", "shown"),
    [
        ([0.96213, 0.96238], "fraction", 60, "96.21–96.24%"),  # read `96.2–96.2%`
        ([13_612.4, 13_618.9], "usd", 60, "$13.61K–$13.62K"),  # read `$13.6K–$13.6K`
        ([13_612.4, 13_618.9], "usd", 50, "~$13.6K"),  # a stats column of 12: about one
        ([2.8011, 2.8043], "number", 60, "2.801–2.804"),
        ([412_312.0, 412_340.0], "number", 60, "412.31–412.34K"),
        ([2.48, 3.05], "number", 60, "2.48–3.05"),  # told apart already: no digit more
    ],
)
def test_a_range_whose_ends_would_read_the_same_gets_a_digit_more(
    values: list[float], unit: str, width: int, shown: str
) -> None:
    # The chart is scaled to its window, so a swing below the shown precision fills it:
    # its range row must say how small the swing is, not `96.2–96.2%`.
    span = chart_lines(chart_view(values, unit=unit), width, 2)[1]
    assert span.rstrip().endswith(f" {shown}")


@pytest.mark.parametrize(
    ("low", "high", "shown", "not_shown"),
    [
        (5_000, 8_500, "$5.0K–$8.5K", "$8,50 "),  # was cut to `$5,000–$8,50`
        (13_600, 14_200, "$13.6K–14.2K", "–$14"),  # too wide with its second `$`
        (234, 394, "$234–$394", "K"),  # the compact form of both ends
    ],
)
async def test_a_figure_too_wide_for_the_stats_column_is_shortened_not_cut(
    low: float, high: float, shown: str, not_shown: str
) -> None:
    view = chart_view([low, high], key="spend_usd", unit="usd", label="spend")
    app = styled_chart(view, "TextSparkline { width: 50; height: 2; }")  # a stats column of 12
    async with app.run_test(size=(60, 4)) as pilot:
        await pilot.pause()
        text = screen_text(pilot)
    assert shown in text
    assert not_shown not in text
    assert f"${high:,.2f}" in text  # the latest value fits as it is


def test_checkpoints_in_every_column_are_not_drawn_but_a_few_are() -> None:
    """At a demo's speed (or over a whole run) a checkpoint fell in every column and the top
    row read `••••!•••`: routine marks show only while sparse; a fault always shows."""
    dense = chart_view([0.0] * 24, markers=[*((c, "checkpoint") for c in range(24)), (9, "fault")])
    top = chart_rows(dense, 2)[0]
    assert MARKER_GLYPHS["checkpoint"] not in top
    assert top[9] == MARKER_GLYPHS["fault"]
    assert drawn_kinds(dense) == {"fault"}
    sparse = chart_view([0.0] * 24, markers=[(3, "checkpoint"), (15, "checkpoint")])
    top = chart_rows(sparse, 2)[0]
    assert top[3] == top[15] == MARKER_GLYPHS["checkpoint"]
    assert drawn_kinds(sparse) == {"checkpoint"}
