"""A reference run on a small chart (`chart_text`, `sparkline.chart_lines`): a dashed line,
`┄` above this run's area and `╌` (reversed) across it, the scale spanning both runs, its
value under ours; marks and markers stay over it."""

from __future__ import annotations

import math
from typing import Any

from ito_tui.state import NAN_BIT, ChartView
from ito_tui.tui.widgets.chart_text import NAN_GLYPH, REF_GLYPH, REF_IN_GLYPH, chart_rows
from ito_tui.tui.widgets.sparkline import LABEL_WIDTH, chart_lines, fitted

from .chart_views import chart_view

REF = {REF_GLYPH, REF_IN_GLYPH}


def with_ref(ours: list[float | None], ref: list[float | None], **fields: Any) -> ChartView:
    return chart_view(
        ours, ref_lows=tuple(ref), ref_highs=tuple(ref), ref_label="run_b (by tokens)", **fields
    )


def test_no_reference_draws_no_line() -> None:
    rows = chart_rows(chart_view([1.0, 2.0, 3.0, 4.0]), 2)
    assert not REF & set("".join(rows))


def test_a_reference_above_this_run_is_a_line_over_empty_cells() -> None:
    # Ours at the bottom (1.0), the reference at the top (5.0): the scale spans both.
    rows = chart_rows(with_ref([1.0] * 4, [5.0] * 4), 2)
    assert rows[0] == REF_GLYPH * 4
    assert REF.isdisjoint(rows[1]) and rows[1].strip()


def test_a_reference_inside_this_run_is_cut_into_the_area() -> None:
    rows = chart_rows(with_ref([5.0] * 4, [1.0] * 4), 2)
    assert rows[1] == REF_IN_GLYPH * 4  # the area stays solid around the line
    assert rows[0] == "████"


def test_columns_between_two_the_reference_has_repeat_the_one_before() -> None:
    rows = chart_rows(with_ref([1.0] * 5, [5.0, None, None, 5.0, None]), 2)
    assert rows[0] == REF_GLYPH * 4 + " "  # none past its last value


def test_a_non_finite_mark_stays_over_the_line() -> None:
    rows = chart_rows(with_ref([1.0, 1.0, None], [5.0, 5.0, 5.0], odd=[0, 0, NAN_BIT]), 2)
    assert rows[0] == REF_GLYPH * 2 + NAN_GLYPH


def test_non_finite_reference_values_are_not_drawn() -> None:
    rows = chart_rows(with_ref([1.0, 2.0], [math.nan, math.inf]), 2)
    assert not REF & set("".join(rows))


def test_the_value_column_says_the_references_value_where_we_are() -> None:
    view = with_ref([1.0, 2.0, 3.0, 4.0], [1.5, 2.5, 3.0, 3.2], ref_value=3.2)
    lines = chart_lines(view, 60, 2)
    assert lines[1].rstrip().endswith(f"{REF_GLYPH} 3.20")
    assert lines[0].rstrip().endswith("4.00")
    three = chart_lines(view, 60, 3)
    assert "1.00–4.00" in three[1] and three[2].rstrip().endswith(f"{REF_GLYPH} 3.20")
    # Without one (no reference value here) it says so: the run has no value at our tokens.
    assert chart_lines(with_ref([1.0, 2.0], [1.0, None]), 60, 2)[1].rstrip().endswith("—")


def test_a_view_fitted_to_another_width_keeps_the_reference_on_its_columns() -> None:
    view = with_ref([1.0, 2.0, 3.0], [3.0, 2.0, 1.0])
    wider = fitted(view, 5)
    assert wider.ref_highs == (None, None, 3.0, 2.0, 1.0)
    assert fitted(view, 2).ref_lows == (2.0, 1.0)
    assert len(chart_lines(view, 40, 2)[0]) == 40 and LABEL_WIDTH < 40


def test_where_the_curves_agree_ours_is_kept_and_where_they_part_the_line_shows() -> None:
    # Ours ramps 1..8 (its top cells partly filled); the reference follows it to column 3,
    # then stays at 1: it agrees on the ramp (our bars keep their shape) and parts after.
    ours = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    plain = chart_rows(chart_view(ours), 2)
    drawn = chart_rows(with_ref(ours, [1.0, 2.0, 3.0, 4.0, 1.0, 1.0, 1.0, 1.0]), 2)
    assert [row[:4] for row in drawn] == [row[:4] for row in plain]
    assert drawn[1][4:] == REF_IN_GLYPH * 4  # cut into our area, under our tops
    assert drawn[0][4:] == plain[0][4:]
