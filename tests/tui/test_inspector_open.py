"""Opening the inspector on an open metric from the picker, and a running run's samples
extending the inspector's view while it shows the run's end."""

from __future__ import annotations

from datetime import timedelta

from ito_tui.contract import TelemetrySample, make_event
from ito_tui.tui.screens.inspector import InspectorScreen
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.telemetry import TelemetryPanel
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .inspector_fakes import NOW, RUN_ID, inspect, rewound_client, rewound_script
from .pipeline_fakes import sample

OPEN = "loss_metrics/global_avg_loss"


def with_open_metric() -> object:
    client = rewound_client()
    client.samples[RUN_ID] = [
        TelemetrySample.model_validate({**s.model_dump(), "metrics": {OPEN: 3.0 - s.step / 1000}})
        for s in client.samples[RUN_ID]
    ]
    return client


async def test_an_open_metric_added_from_the_picker_opens_in_the_inspector() -> None:
    client = with_open_metric()
    app = snapshot_app(client, now=NOW, start=RUN_ID)  # type: ignore[arg-type]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = next(s for s in app.screen_stack if isinstance(s, PipelineScreen))
        screen.query_one(TelemetryPanel).toggle_extra(OPEN)
        await pilot.pause()
        charts = screen.query_one(ChartStack)
        assert OPEN in charts.keys
        charts.focus()
        charts.highlight(OPEN)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen), what="inspector")
        inspector: InspectorScreen = app.screen
        await wait_for(pilot, lambda: inspector.fetches >= 1, what="the page")
        assert inspector.key == OPEN
        assert client.metric_reads[-1] == (OPEN,)  # type: ignore[attr-defined]
        view = inspector.view
        assert view is not None and view.readout is not None
        assert view.readout.value == 3.0 - 600 / 1000


def next_sample(seq: int, step: int) -> object:
    s = rewound_script()
    at = s.t + timedelta(seconds=30 * (step - 590))
    return make_event(
        "telemetry",
        seq=seq,
        run_id=RUN_ID,
        ts=at.isoformat(),
        data=sample(seq, step, at, 1.9),
    )


async def test_live_samples_extend_the_view_at_the_end_and_leave_a_zoomed_one() -> None:
    app = snapshot_app(rewound_client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = next(s for s in app.screen_stack if isinstance(s, PipelineScreen))
        inspector = await inspect(pilot)
        view = inspector.view
        assert view is not None and view.x_max == 600
        seq = screen.tracker.last_seq
        for i, step in enumerate((610, 620, 630)):
            event = next_sample(seq + 1 + i, step)
            screen.applied(event, screen.tracker.feed(event))  # type: ignore[arg-type]
        await wait_for(
            pilot,
            lambda: inspector.view is not None and inspector.view.x_max == 630,
            what="the live samples drawn",
        )
        assert inspector.view is not None and inspector.view.readout is not None
        assert inspector.view.readout.step == 630 and inspector.view.readout.value == 1.9
        await pilot.press("shift+left", "plus")
        zoomed = inspector.view
        assert zoomed is not None and zoomed.viewport.zoomed
        event = next_sample(seq + 4, 640)
        screen.applied(event, screen.tracker.feed(event))  # type: ignore[arg-type]
        await pilot.pause(0.3)
        assert inspector.view is not None
        assert (inspector.view.x_lo, inspector.view.x_hi) == (zoomed.x_lo, zoomed.x_hi)
        assert len(inspector.pages.tail) == 4


async def test_f1_lists_the_inspectors_keys() -> None:
    from ito_tui.tui.screens.help import HelpScreen, binding_rows

    app = snapshot_app(rewound_client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        inspector = await inspect(pilot)
        ids = {row.binding_id for row in binding_rows(inspector)}
        names = "left right left_ten right_ten in out pan_left pan_right reset axis log smooth"
        for name in (*names.split(), "open", "copy", "back"):
            assert f"inspector.{name}" in ids
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")


async def test_i_opens_the_loss_chart_from_any_tab_and_escape_leaves_the_charts_focused() -> None:
    client = rewound_client()
    app = snapshot_app(client, now=NOW, start=RUN_ID)  # type: ignore[arg-type]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = next(s for s in app.screen_stack if isinstance(s, PipelineScreen))
        await pilot.press("3")  # the Events tab, its log focused
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen), what="inspector")
        inspector: InspectorScreen = app.screen
        assert inspector.key == "loss"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="the run screen")
        charts = screen.query_one(ChartStack)
        assert charts.has_focus
        await pilot.press("down", "i")  # the chart picked next opens the same way
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen), what="inspector")
        assert app.screen.key == charts.keys[1]  # type: ignore[attr-defined]
