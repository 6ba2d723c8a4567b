"""The inspector's viewport transitions (`state/inspect_axis.py`): zoom around the cursor,
pan, cursor moves, reset, the axis/log/smoothing keys and `wanted_steps`, with properties:
zoom in then out returns the range, the cursor stays inside the plot, the wanted steps lie
inside the data."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ito_tui.state.inspect import (
    InspectorView,
    Point,
    Viewport,
    XAxis,
    cycle_axis,
    cycle_smoothing,
    inspector_view,
    move_cursor,
    pan,
    reset,
    toggle_log,
    wanted_steps,
    zoom,
)
from ito_tui.state.inspect_points import AXES

T = 1_780_000_000.0
POINTS = [Point(i, i * 10, i * 40_960, T + i * 2.0, 3.0 - i * 1e-3) for i in range(1, 1001)]
"""Steps 10..10,000, tokens by 40,960 a step-ten, 2 s apart."""
FEW = [*POINTS[::10], POINTS[-1]]
"""The same run's extent at a tenth of the points (the properties draw many views)."""


def draw(vp: Viewport, width: int = 80, points: list[Point] = POINTS) -> InspectorView:
    return inspector_view(points, None, (), vp, width, key="loss", label="loss", unit="number")


def test_zoom_in_around_the_cursor_keeps_the_cursor_x_in_its_column() -> None:
    whole = draw(Viewport(cursor=20))
    vp = zoom(whole.viewport, whole, 4.0)
    assert vp.zoomed and vp.lo is not None and vp.hi is not None
    assert vp.hi - vp.lo == pytest.approx((whole.x_hi - whole.x_lo) / 4)
    zoomed = draw(vp)
    width = whole.width
    x_before = whole.x_lo + (20.5 / width) * (whole.x_hi - whole.x_lo)
    x_after = zoomed.x_lo + (20.5 / width) * (zoomed.x_hi - zoomed.x_lo)
    assert x_after == pytest.approx(x_before)
    assert zoomed.cursor == 20


def test_the_cursor_following_the_run_zooms_around_the_newest_point() -> None:
    whole = draw(Viewport())
    vp = zoom(whole.viewport, whole, 10.0)
    assert vp.hi == whole.x_max
    zoomed = draw(vp)
    assert zoomed.readout is not None and zoomed.readout.step == 10_000


def test_zooming_out_past_the_run_is_the_whole_run_and_reset_keeps_the_choices() -> None:
    whole = draw(Viewport(cursor=5))
    vp = zoom(whole.viewport, whole, 3.0)
    out = zoom(vp, draw(vp), 0.1)
    assert (out.lo, out.hi) == (None, None)
    chosen = Viewport(axis="tokens", lo=1.0, hi=5.0, cursor=3, log_y=True, smoothing=2)
    assert reset(chosen) == Viewport(axis="tokens", log_y=True, smoothing=2)


def test_zoom_stops_at_the_narrowest_span_and_inside_the_data() -> None:
    vp = Viewport(cursor=0)
    for _ in range(40):
        vp = zoom(vp, draw(vp), 4.0)
    assert vp.lo is not None and vp.hi is not None
    assert vp.hi - vp.lo == pytest.approx(4.0)
    assert vp.lo >= 10.0


def test_pan_moves_by_a_fraction_of_the_width_and_stops_at_the_ends() -> None:
    vp = Viewport(lo=1000.0, hi=2000.0)
    view = draw(vp)
    assert (pan(vp, view, 0.5).lo, pan(vp, view, 0.5).hi) == (1500.0, 2500.0)
    assert (pan(vp, view, -5.0).lo, pan(vp, view, -5.0).hi) == (10.0, 1010.0)
    assert (pan(vp, view, 50.0).lo, pan(vp, view, 50.0).hi) == (9000.0, 10_000.0)
    whole = Viewport()
    assert pan(whole, draw(whole), 0.5) == whole


def test_cursor_moves_and_follows_the_run_at_the_last_column() -> None:
    vp = Viewport()
    view = draw(vp, width=10)
    vp = move_cursor(vp, view, -3)
    assert vp.cursor == 6
    assert move_cursor(vp, view, -100).cursor == 0
    assert move_cursor(vp, view, 3).cursor == -1
    assert move_cursor(vp, view, 100).cursor == -1


def test_axis_log_and_smoothing_keys_cycle() -> None:
    vp = Viewport(lo=1.0, hi=2.0, cursor=4)
    axes = [vp.axis]
    for _ in range(3):
        vp = cycle_axis(vp)
        axes.append(vp.axis)
        assert (vp.lo, vp.hi, vp.cursor) == (None, None, -1)
    assert axes == ["step", "tokens", "time", "step"]
    assert toggle_log(toggle_log(vp)) == vp and toggle_log(vp).log_y
    weights = []
    for _ in range(5):
        weights.append(vp.weight)
        vp = cycle_smoothing(vp)
    assert weights == [0.0, 0.6, 0.9, 0.99, 0.0]


def test_wanted_steps_is_none_for_the_whole_run_and_the_zoomed_steps_else() -> None:
    whole = draw(Viewport())
    assert wanted_steps(whole.viewport, whole) is None
    vp = Viewport(lo=2000.0, hi=3000.0)
    assert wanted_steps(vp, draw(vp)) == (1990, 3010)  # one point beyond each side
    by_time = Viewport(axis="time", lo=T + 200.0, hi=T + 400.0)
    assert wanted_steps(by_time, draw(by_time)) == (990, 2010)
    by_tokens = Viewport(axis="tokens", lo=409_600.0, hi=819_200.0)
    assert wanted_steps(by_tokens, draw(by_tokens)) == (90, 210)


@settings(max_examples=100, deadline=None)
@given(
    factor=st.floats(1.01, 50.0),
    cursor=st.integers(-1, 79),
    axis=st.sampled_from(AXES),
    start=st.floats(0.0, 0.9),
)
def test_zoom_in_then_out_returns_the_range(
    factor: float, cursor: int, axis: XAxis, start: float
) -> None:
    whole = draw(Viewport(axis=axis, cursor=cursor), points=FEW)
    span = whole.x_max - whole.x_min
    lo = whole.x_min + start * span
    vp = Viewport(axis=axis, lo=lo, hi=lo + span * 0.1, cursor=cursor)
    view = draw(vp, points=FEW)
    zoomed = zoom(vp, view, factor)
    assert zoomed.lo is not None and zoomed.hi is not None
    if zoomed.hi - zoomed.lo > (view.x_hi - view.x_lo) / factor + 1e-6:
        return  # stopped at the narrowest span: nothing to return to
    back = zoom(zoomed, draw(zoomed, points=FEW), 1 / factor)
    assert back.lo == pytest.approx(vp.lo, abs=1e-6 * span)
    assert back.hi == pytest.approx(vp.hi, abs=1e-6 * span)
    assert back.cursor == cursor


@settings(max_examples=60, deadline=None)
@given(
    width=st.integers(1, 200),
    moves=st.lists(st.integers(-300, 300), max_size=8),
    zooms=st.lists(st.sampled_from([0.5, 2.0, 4.0, 0.25]), max_size=6),
    pans=st.lists(st.floats(-2.0, 2.0), max_size=4),
)
def test_the_cursor_stays_in_the_plot_and_wanted_steps_inside_the_data(
    width: int, moves: list[int], zooms: list[float], pans: list[float]
) -> None:
    vp = Viewport()
    view = draw(vp, width, FEW)
    for by in moves:
        vp = move_cursor(vp, view, by)
        view = draw(vp, width, FEW)
        assert 0 <= view.cursor < width
    for factor in zooms:
        vp = zoom(vp, view, factor)
        view = draw(vp, width, FEW)
    for fraction in pans:
        vp = pan(vp, view, fraction)
        view = draw(vp, width, FEW)
    assert 0 <= view.cursor < width
    assert view.x_min <= view.x_lo <= view.x_hi <= view.x_max
    wanted = wanted_steps(vp, view)
    if wanted is not None:
        assert 10 <= wanted[0] <= wanted[1] <= 10_000


ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 5e-324, 1e308, -1e308, 1e-300]),
)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(ANY_FLOAT, max_size=40),
    ref_values=st.lists(ANY_FLOAT, max_size=10),
    width=st.integers(1, 120),
    log_y=st.booleans(),
    smoothing=st.integers(0, 3),
    axis=st.sampled_from(AXES),
    cursor=st.integers(-1, 130),
)
# A span of 25,000 at 2e15: ticks rounded to 12 digits went 5,000 past the top.
@example([1972256132610000.0], [1972256132635000.0], 1, False, 0, "step", 0)
def test_any_values_draw_without_raising_and_ticks_stay_on_the_scale(
    values: list[float],
    ref_values: list[float],
    width: int,
    log_y: bool,
    smoothing: int,
    axis: XAxis,
    cursor: int,
) -> None:
    pts = [Point(i, i * 7 % 50, i * 1000, T + i, v) for i, v in enumerate(values)]
    ref = [Point(i, i * 3, i * 2000, T - 50 + i, v) for i, v in enumerate(ref_values)]
    vp = Viewport(axis=axis, log_y=log_y, smoothing=smoothing, cursor=cursor)
    view = inspector_view(pts, ref, (), vp, width, key="loss", label="loss", unit="number")
    assert view.width == width and 0 <= view.cursor < width
    if view.y_lo is not None and view.y_hi is not None:
        assert view.y_lo < view.y_hi
        near = 1e-6 * (view.y_hi - view.y_lo)  # a tick at an end, to rounding
        assert all(view.y_lo - near <= v <= view.y_hi + near for v, _ in view.y_ticks)
    for column in (*view.columns, *(view.ref_columns or ())):
        if column is not None and column.lo is not None:
            assert column.hi is not None and column.lo <= column.hi
    assert all(0 <= c < width for c, _ in view.x_ticks)


ANY_COUNT = st.one_of(
    st.integers(0, 2**53 + 8),
    st.sampled_from([2**53, 2**53 + 1, 2**63, 10**300, 2**1024, 10**400]),
    st.integers(-(10**400), 10**400),
)
"""Steps and tokens seen as a backend may send them: any JSON integer, past float range."""


@settings(max_examples=80, deadline=None)
# Tokens from -10**400 to 10**400 across two points: the reference aligned by tokens met
# a span wider than the largest float (inf / inf, a NaN column) — CI found it once.
@example(counts=[(0, 10**400), (1, -(10**400))], width=1, axis="step", zooms=1, cursor=0)
@example(counts=[(0, -(10**400)), (5, 10**400), (9, 3)], width=7, axis="time", zooms=1, cursor=3)
@given(
    counts=st.lists(st.tuples(ANY_COUNT, ANY_COUNT), min_size=1, max_size=30),
    width=st.integers(1, 120),
    axis=st.sampled_from(AXES),
    zooms=st.integers(0, 3),
    cursor=st.integers(-1, 130),
)
def test_any_steps_and_tokens_draw_zoom_and_read_out_without_raising(
    counts: list[tuple[int, int]], width: int, axis: XAxis, zooms: int, cursor: int
) -> None:
    # A step or a token count no float holds (10**400) is the edge of the axis, not an
    # OverflowError; the readout still names the exact integer sent.
    pts = [Point(i, s, t, T + i, float(i)) for i, (s, t) in enumerate(counts)]
    ref = [Point(i, s, t, T - 5 + i, 2.0 * i) for i, (s, t) in enumerate(counts[:5])]
    vp = Viewport(axis=axis, cursor=cursor)
    view = draw_any(pts, ref, vp, width)
    for _ in range(zooms):
        vp = zoom(vp, view, 2.0)
        view = draw_any(pts, ref, vp, width)
        wanted_steps(vp, view)
    assert view.width == width and 0 <= view.cursor < width
    assert all(0 <= c < width for c, _ in view.x_ticks)
    readout = view.readout
    if readout is not None and readout.step is not None:
        assert readout.step in {s for s, _ in counts}


def draw_any(pts: list[Point], ref: list[Point], vp: Viewport, width: int) -> InspectorView:
    return inspector_view(pts, ref, (), vp, width, key="loss", label="loss", unit="number")
