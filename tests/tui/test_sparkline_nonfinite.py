"""Charts of diverged runs: finite points drawn, NaN and ±inf marked, huge spans drawn."""

from __future__ import annotations

import math
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from ito_tui.format import metric_compact, metric_value
from ito_tui.state import NAN_BIT, NEG_INF_BIT, POS_INF_BIT, RunTracker
from ito_tui.state.metrics import METRICS
from ito_tui.tui.widgets.chart_text import (
    LOWER,
    MARKER_GLYPHS,
    NAN_GLYPH,
    NEG_INF_GLYPH,
    POS_INF_GLYPH,
    chart_rows,
)
from ito_tui.tui.widgets.sparkline import TextSparkline

from .chart_views import chart_view

BIG = sys.float_info.max


def test_non_finite_columns_are_marked_where_they_are_and_the_rest_is_drawn() -> None:
    view = chart_view([1.0, 2.0, None, None, None], odd=[0, 0, NAN_BIT, POS_INF_BIT, NEG_INF_BIT])
    top, bottom = chart_rows(view, 2)
    assert top[2:4] == NAN_GLYPH + POS_INF_GLYPH and bottom[4] == NEG_INF_GLYPH
    assert set(bottom[:2]) <= set(LOWER[1:]) and top[1] != " "  # the finite part
    # A NaN-only column between finite ones is not a hole to fill with the last bar.
    gap = chart_view([1.0, None, 2.0], odd=[0, NAN_BIT, 0])
    assert [row[1] for row in chart_rows(gap, 2)] == [NAN_GLYPH, " "]


def test_no_marker_hides_a_non_finite_mark() -> None:
    view = chart_view(
        [1.0, None, None, 2.0],
        odd=[0, NAN_BIT, POS_INF_BIT, 0],
        markers=[(1, "gate"), (2, "fault"), (3, "gate")],
    )
    top, _bottom = chart_rows(view, 2)
    assert top[1:] == NAN_GLYPH + POS_INF_GLYPH + MARKER_GLYPHS["gate"]


def test_a_chart_of_only_non_finite_samples_shows_only_marks() -> None:
    view = chart_view([None] * 3, odd=[NAN_BIT, POS_INF_BIT, 0])
    assert chart_rows(view, 1) == [NAN_GLYPH + POS_INF_GLYPH + " "]


finite = st.floats(-BIG, BIG, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(
    cols=st.lists(st.none() | st.tuples(finite, finite), min_size=1, max_size=40),
    odd=st.lists(st.sampled_from([0, 0, NAN_BIT, POS_INF_BIT, NEG_INF_BIT, 7]), max_size=40),
    rows=st.integers(1, 4),
)
def test_any_finite_values_however_huge_draw_without_a_crash(
    cols: list[tuple[float, float] | None], odd: list[int], rows: int
) -> None:
    """−1e308 and 1e308 in one window span more than a float holds: halved, not a crash."""
    lows = [None if c is None else min(c) for c in cols]
    highs = [None if c is None else max(c) for c in cols]
    known = [v for v in lows + highs if v is not None]
    view = chart_view(
        lows, highs, vmin=min(known, default=None), vmax=max(known, default=None),
        odd=(odd + [0] * len(cols))[: len(cols)],
    )  # fmt: skip
    drawn = chart_rows(view, rows)
    assert len(drawn) == rows and all(len(r) == len(cols) for r in drawn)


def test_the_value_label_says_nan_and_infinity_never_the_missing_mark() -> None:
    tracker = RunTracker("run_diverged")
    for x, y in enumerate([2.0, math.nan, math.inf]):
        tracker.bank["loss"].append(float(x), y)
    view = tracker.chart("loss", 3, None)
    assert view.value == math.inf and list(view.odd) == [0, NAN_BIT, POS_INF_BIT]
    for metric in METRICS:  # every chart's unit writes every non-finite value
        for fmt in (metric_value, metric_compact):
            assert "NaN" in fmt(metric.unit, math.nan), metric.key
            assert "∞" in fmt(metric.unit, math.inf), metric.key


class Diverged(App[None]):
    def compose(self) -> ComposeResult:
        yield TextSparkline(
            chart_view(
                [1.0, 2.0] + [None] * 30,
                value=math.inf,
                odd=[0, 0] + [NAN_BIT] * 15 + [POS_INF_BIT] * 15,
            ),
            id="chart",
        )


async def test_marks_and_a_non_finite_value_are_drawn_in_the_themes_error_colour() -> None:
    app = Diverged()
    async with app.run_test(size=(60, 3)) as pilot:
        await pilot.pause()
        chart = app.query_one(TextSparkline)
        segments = list(chart.render_line(0))
        by_text = {s.text.strip(): s.style for s in segments if s.text.strip()}
        mark_styles = {s.style for s in segments if set(s.text) & {NAN_GLYPH, POS_INF_GLYPH}}
        error = chart.get_component_rich_style("sparkline--nonfinite", partial=True).color
        chart_colour = chart.get_component_rich_style("sparkline--chart", partial=True).color
        assert error is not None and error != chart_colour
        assert mark_styles and all(s is not None and s.color == error for s in mark_styles)
        assert by_text["∞"] is not None and by_text["∞"].color == error
        assert NEG_INF_GLYPH not in "".join(s.text for s in segments)
