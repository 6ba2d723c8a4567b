"""The inspector when a fetch fails or answers late, and on NaN / ±inf values: it keeps
what it drew, says why, and never blocks a key."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ito_tui.client import BackendUnavailable
from ito_tui.contract import TelemetryPage, TelemetrySample
from ito_tui.tui.widgets.plot import InspectorPlot
from tests.support.apps import settle
from tests.support.waiting import wait_for

from .inspector_fakes import NOW, RUN_ID, inspect, rewound_client
from .pipeline_fakes import FakeRunClient
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


@dataclass(kw_only=True)
class RangeFaults(FakeRunClient):
    """A fake whose range queries (`from_step`) fail, or wait for `release`."""

    fail: bool = False
    release: asyncio.Event | None = None
    ranged: list[tuple[int | None, int | None]] = field(default_factory=list)

    async def telemetry(
        self,
        run_id: str,
        since_seq: int | None = None,
        max_points: int | None = None,
        metrics: Sequence[str] = (),
        from_step: int | None = None,
        to_step: int | None = None,
    ) -> TelemetryPage:
        if from_step is not None:
            self.ranged.append((from_step, to_step))
            if self.fail:
                raise BackendUnavailable("connection refused (127.0.0.1:9)")
            if self.release is not None:
                await self.release.wait()
        return await super().telemetry(
            run_id, since_seq, max_points, metrics, from_step=from_step, to_step=to_step
        )


def faulty(**kw: Any) -> RangeFaults:
    base = rewound_client()
    client = RangeFaults(script=base.script, **kw)
    client.samples = base.samples
    return client


def app_of(client: FakeRunClient) -> Any:
    from tests.support.apps import snapshot_app

    return snapshot_app(client, now=NOW, start=RUN_ID)


def title(inspector: Any) -> str:
    return str(inspector.query_one("#inspector-title").render())


async def test_a_zoom_whose_fetch_fails_keeps_the_coarse_view_and_says_why() -> None:
    client = faulty(fail=True)
    app = app_of(client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        inspector = await inspect(pilot)
        whole = inspector.view
        assert whole is not None
        await pilot.press("shift+left", "plus")
        await wait_for(pilot, lambda: "fetch failed" in title(inspector), what="the failure")
        assert client.ranged, "the zoom asked for its range"
        view = inspector.view
        assert view is not None and view.viewport.zoomed  # zoomed, on the coarse points
        assert any(c is not None for c in view.columns)
        assert "Backend unreachable" in title(inspector)
        assert "connection refused" in title(inspector)
        await pilot.press("left")  # keys still work
        assert inspector.view is not None and inspector.view.cursor == view.cursor - 1


async def test_a_late_zoom_shows_fetching_keys_still_move_then_the_page_lands() -> None:
    release = asyncio.Event()
    client = faulty(release=release)
    app = app_of(client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        inspector = await inspect(pilot)
        await pilot.press("shift+left", "plus")
        await wait_for(pilot, lambda: bool(client.ranged), what="the range asked")
        assert "fetching…" in title(inspector)
        before = inspector.fetches
        cursor = inspector.view.cursor if inspector.view is not None else 0
        await pilot.press("left", "left")  # not blocked by the fetch in flight
        assert inspector.view is not None and inspector.view.cursor == cursor - 2
        release.set()
        await wait_for(pilot, lambda: inspector.fetches > before, what="the late page")
        await pilot.pause()
        assert "fetching…" not in title(inspector)


def odd_client() -> FakeRunClient:
    client = rewound_client()
    items = client.samples[RUN_ID]
    odd = {100: math.nan, 200: math.inf, 300: -math.inf}
    client.samples[RUN_ID] = [
        TelemetrySample.model_validate({**s.model_dump(), "loss": odd[s.step]})
        if s.step in odd
        else s
        for s in items
    ]
    return client


async def test_nan_and_infinite_values_are_marked_in_their_columns_and_read_out() -> None:
    app = app_of(odd_client())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        inspector = await inspect(pilot)
        view = inspector.view
        assert view is not None and view.y_lo is not None and view.y_hi is not None
        assert math.isfinite(view.y_lo) and math.isfinite(view.y_hi)
        rows = inspector.query_one(InspectorPlot).text()
        plot = rows[2:-3]
        assert "×" in plot[0] and "↑" in plot[0] and "↓" in plot[-1]
        nan_col = next(i for i, c in enumerate(view.columns) if c is not None and c.odd & 1)
        await pilot.press(*(["left"] * (view.cursor - nan_col)))
        readout = inspector.query_one(InspectorPlot).text()[0]
        assert "NaN" in readout and "step 100" in readout


async def test_nan_and_infinite_values_in_ascii_under_ito_ansi() -> None:
    from tests.support.apps import snapshot_app

    app = snapshot_app(odd_client(), now=NOW, start=RUN_ID, theme="ito-ansi")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        inspector = await inspect(pilot)
        plot = inspector.query_one(InspectorPlot)
        assert plot.plain
        rows = plot.text()[2:-3]
        assert "x" in rows[0] and "^" in rows[0] and "v" in rows[-1]
        assert not any("\u2800" <= ch <= "\u28ff" for row in rows for ch in row)
