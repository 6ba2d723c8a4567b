"""Deterministic data for the inspector's tests: run_7f3a9c's pretrain (a node failure at
step 400) rewound from step 520 to 460 and run on to 600, and a reference run whose
steps are twice as long (aligned by tokens seen)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from pydantic import SecretStr

from ito_tui.contract import TelemetrySample
from ito_tui.state.inspect import Point, Reference
from ito_tui.tui.screens.inspector import InspectorScreen
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.widgets.chart_stack import ChartStack
from tests.support.waiting import wait_for

from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, Script, loss_at, pretrain_script, sample

__all__ = ["NOW", "RUN_ID", "SecretStr", "inspect", "reference", "rewound_client"]


def rewound_script() -> Script:
    """The pretrain to step 520, then the step back to 460 (a rewind: the rollback), on
    to 600 with a lower loss."""
    s = pretrain_script(up_to_step=520)
    for step in range(460, 601, 10):
        seq = len(s.events) + 1
        loss = loss_at(step) - 0.08
        s.add("telemetry", sample(seq, step, s.t + timedelta(seconds=30), loss), dt=30)
    return s


def rewound_client() -> FakeRunClient:
    """The script played by the stream; `GET /telemetry` answers all its samples (the
    fake ignores `max_points`: 113 samples, fewer than any page would hold)."""
    events = rewound_script().events
    client = FakeRunClient(script=events)
    client.samples[RUN_ID] = [
        TelemetrySample.model_validate(getattr(e, "data").model_dump())  # noqa: B009
        for e in events
        if e.type == "telemetry"
    ]
    return client


def reference() -> Reference:
    """The previous run: 2 Mi tokens a step (ours: 1 Mi), its loss a little higher."""
    points = tuple(
        Point(i, step, step * 2_097_152, 1.7e9 + 60 * i, 2.2 + 2.5 * math.exp(-step / 90))
        for i, step in enumerate(range(5, 305, 5))
    )
    return Reference("run_prev01", "run_prev01", {"loss": points})


async def inspect(
    pilot: Any, key: str = "loss", *, ref: Reference | None = None
) -> InspectorScreen:
    """From the run screen: the `key` chart opened (Enter on it; pushed with `ref` when
    given), once its whole-run page is drawn."""
    app = pilot.app
    screen = next(s for s in app.screen_stack if isinstance(s, PipelineScreen))
    if ref is None:
        charts = screen.query_one(ChartStack)
        charts.focus()
        charts.highlight(key)
        await pilot.press("enter")
    else:
        app.push_screen(InspectorScreen(RUN_ID, key, tracker=screen.tracker, reference=ref))
    await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen), what="the inspector")
    inspector: InspectorScreen = app.screen
    await wait_for(pilot, lambda: inspector.fetches >= 1, what="the whole run's page")
    await pilot.pause(0.1)
    return inspector
