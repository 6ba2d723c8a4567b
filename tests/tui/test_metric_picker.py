"""The metric picker (`m` on the run screen): every open metric with its last value as sent
(NaN, ∞, −∞, — for null), filtered as typed (a substring or /regex/; a bad regex says so),
Enter charting or uncharting the metric under its own name."""

from __future__ import annotations

import math
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from ito_tui.format import INF, MISSING, NAN, NEG_INF
from ito_tui.tui.screens.metric_picker import MetricPicker, MetricRow, name_filter
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.chart_text import NONFINITE_GLYPHS
from ito_tui.tui.widgets.sparkline import LABEL_WIDTH
from ito_tui.tui.widgets.telemetry import TelemetryPanel
from tests.support.apps import (
    SIZE_IDS,
    SIZES,
    assert_steady_fields,
    settle,
    settle_quiet,
    snapshot_app,
)

from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, pretrain_script, sample
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

AVG = "loss_metrics/global_avg_loss"
MAX = "loss_metrics/global_max_loss"


def diverging_client() -> FakeRunClient:
    """A pretrain run whose last samples carry torchtitan's metrics{}: the average loss
    goes NaN (and the fixed loss chart with it), the max loss +inf, the lr null."""
    script = pretrain_script(up_to_step=300)
    for step in range(310, 420, 10):
        late = step >= 380
        body = sample(len(script.events) + 1, step, script.t, math.nan if late else 2.4)
        body["metrics"] = {
            AVG: "NaN" if late else 2.4,
            MAX: "Infinity" if late else 3.1,
            "grad_norm": 0.85,
            "lr": None,
            "memory/max_active(GiB)": 58.31,
            "throughput(tps)": 8412.0,
            "time_metrics/data_loading(%)": "-Infinity" if late else 1.2,
        }
        script.add("telemetry", body, dt=30)
    return FakeRunClient(script=script.events)


async def picker_open(pilot: Pilot[Any], query: str = "") -> MetricPicker:
    await settle(pilot)
    await pilot.press("m")
    await pilot.pause()
    picker = pilot.app.screen
    assert isinstance(picker, MetricPicker)
    assert_steady_fields(picker)
    if query:
        await pilot.press(*query)
        await pilot.pause()
    return picker


def listed(picker: MetricPicker) -> list[str]:
    options = picker.query_one("#metric-list", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def status(picker: MetricPicker) -> str:
    return str(picker.query_one("#metric-status", Static).content)


def row_of(rows: list[str], name: str) -> str:
    (row,) = [r for r in rows if f" {name} " in r]
    return row


def test_a_row_shows_nan_infinity_and_null_as_such() -> None:
    assert MetricRow(AVG, math.nan).text().rstrip().endswith(NAN)
    assert MetricRow(MAX, math.inf).text().rstrip().endswith(INF)
    assert MetricRow("x", -math.inf).text().rstrip().endswith(NEG_INF)
    assert MetricRow("lr", None).text().rstrip().endswith(MISSING)
    assert MetricRow("lr", 3e-4, charted=True).text().startswith("✓ lr ")
    # A hostile name is made inert and cut, never markup or an escape.
    text = MetricRow("[b]x\x1b[31m" + "y" * 80, 1.0).text()
    assert "\x1b" not in text and "[b]x" in text and "…" in text


@pytest.mark.parametrize(
    ("query", "name", "hit"),
    [
        ("", "anything", True),
        ("GLOBAL_avg", AVG, True),
        ("avg", MAX, False),
        ("/^loss_.*max/", MAX, True),
        ("/^loss_.*max", MAX, True),  # the closing slash is optional
        ("/^max/", MAX, False),
    ],
)
def test_the_filter_is_a_substring_or_a_regex_between_slashes(
    query: str, name: str, hit: bool
) -> None:
    assert name_filter(query)(name) is hit


def test_an_invalid_regex_is_named() -> None:
    with pytest.raises(ValueError, match="invalid regex"):
        name_filter("/loss[/")


async def test_m_lists_every_metric_with_its_last_value() -> None:
    app = snapshot_app(diverging_client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = await picker_open(pilot)
        rows = listed(picker)
        assert len(rows) == 7
        assert row_of(rows, AVG).rstrip().endswith(NAN)
        assert row_of(rows, MAX).rstrip().endswith(INF)
        assert row_of(rows, "time_metrics/data_loading(%)").rstrip().endswith(NEG_INF)
        assert row_of(rows, "lr").rstrip().endswith(MISSING)
        assert row_of(rows, "throughput(tps)").rstrip().endswith("8,412")
        assert status(picker).startswith("7 of 7")


async def test_typing_filters_and_a_bad_regex_says_so_and_keeps_the_list() -> None:
    app = snapshot_app(diverging_client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = await picker_open(pilot, "loss")
        assert [r.split()[0] for r in listed(picker)] == [AVG, MAX]
        await pilot.press("ctrl+u")  # clear the filter
        await pilot.press(*"/^(mem|time)")
        await pilot.pause()
        assert len(listed(picker)) == 2
        await pilot.press("[")
        await pilot.pause()
        assert "invalid regex" in status(picker)
        assert len(listed(picker)) == 2  # the last good list stays
        await pilot.press("]", "/")  # `/^(mem|time)[]/` is still invalid: `[]` is unclosed
        await pilot.pause()
        assert "invalid regex" in status(picker)


async def test_enter_charts_the_metric_under_its_own_name_and_again_removes_it() -> None:
    app = snapshot_app(diverging_client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await picker_open(pilot, "global_avg")
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, MetricPicker)
        panel = app.screen.query_one(TelemetryPanel)
        charts = panel.query_one(ChartStack)
        assert panel.extras == (AVG,) and charts.keys[-1] == AVG
        rows = charts.chart_text(AVG)
        # Its own name, too long for the label column: its start, then its end (the max
        # loss's chart would read `…_max_loss`).
        assert rows[0].startswith("loss_metr…") and rows[1].startswith("…_avg_loss")
        assert rows[0].rstrip().endswith(NAN)  # the newest value is NaN: said so
        cells = "".join(row[LABEL_WIDTH : LABEL_WIDTH + charts.chart_width()] for row in rows)
        assert set(cells) & NONFINITE_GLYPHS  # the NaN samples marked where they are
        # Listed again as charted, and Enter takes it away.
        picker = await picker_open(pilot, "global_avg")
        assert listed(picker)[0].startswith("✓ ")
        await pilot.press("enter")
        await settle(pilot)
        assert not panel.extras and AVG not in charts.keys


async def test_escape_closes_the_picker_without_a_change() -> None:
    app = snapshot_app(diverging_client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await picker_open(pilot, "max")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, MetricPicker)
        assert app.screen.query_one(TelemetryPanel).extras == ()


async def picked_nan_loss(pilot: Pilot[Any]) -> None:
    """The average loss charted from the picker, then the picker open again on `loss`."""
    await settle(pilot)
    await pilot.press("m", *"global_avg", "enter")
    await settle(pilot)
    await pilot.press("m", *"loss")
    await settle_quiet(pilot)


async def charted_nan_loss(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("m", *"global_avg", "enter")
    await settle_quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_metric_picker_nan_loss(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the metric picker over the run screen, filtered on `loss`: two rows,
    `✓ loss_metrics/global_avg_loss … NaN` (charted) and `loss_metrics/global_max_loss … ∞`,
    the status `2 of 7 · Enter charts or uncharts (✓)`, and the footer's Close and Chart
    keys."""
    app = snapshot_app(diverging_client(), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=picked_nan_loss)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_metric_chart_nan_loss(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see the telemetry panel scrolled to its last chart,
    `loss_metrics/global_avg_loss` under its own name (`loss_metr…` over `…_avg_loss`), its newest
    value `NaN` in the error colour and the NaN samples marked at the right end of the
    chart; the fixed loss chart, where visible, marks the same samples."""
    app = snapshot_app(diverging_client(), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=charted_nan_loss)


async def test_an_open_list_reads_the_values_again_and_keeps_the_highlight() -> None:
    """The values move while the list is open: `newer` is read each second (REFRESH_S),
    the filter and the highlighted metric stay."""
    from textual.app import App

    values = {"a/x": 1.0, "a/y": 2.0, "b/z": 3.0}

    def rows() -> tuple[tuple[MetricRow, ...], int]:
        return tuple(MetricRow(n, v) for n, v in sorted(values.items())), 0

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(MetricPicker(*rows(), newer=rows))

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, MetricPicker)
        await pilot.press(*"a/", "down")  # a/x, a/y shown; a/y highlighted
        await pilot.pause()
        values["a/y"] = math.nan
        values["a/w"] = 0.5  # a new metric sorts first under the same filter
        await pilot.pause(1.3)
        rows_now = listed(picker)
        assert [r.split()[0] for r in rows_now] == ["a/w", "a/x", "a/y"]
        assert row_of(rows_now, "a/y").rstrip().endswith(NAN)
        highlighted = picker.query_one("#metric-list", OptionList).highlighted
        assert highlighted == 2  # still a/y
        assert str(picker.query_one("#metric-title", Static).content).endswith("(4)")
