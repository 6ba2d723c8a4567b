"""The pipeline screen against numbers a backend may legally send: NaN, ±Infinity, ±1e308,
10**400, null, and timestamps at the edge of the representable range.

Every case runs the real app on a run of desk_sim behind `Tamper`, and checks the app is
alive, answers a key, and shows the values as data (`NaN`, `∞`), never as "no value".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from ito_tui.format import MISSING
from ito_tui.tui.screens.error import ErrorScreen
from ito_tui.tui.widgets.chart_stack import ChartStack
from ito_tui.tui.widgets.sparkline import LABEL_WIDTH, NAN_GLYPH, POS_INF_GLYPH
from tests.tui.pipeline_live import live_app, pipeline_of, shown_pipeline, start_run, wait_for

from .conftest import Tampered
from .numbers import as_strings, diverge, everywhere, nulls

pytestmark = [pytest.mark.faults, pytest.mark.slow]
SPEED = 20_000.0


def chart_rows(app: Any, metric: str) -> list[str]:
    """The rows the chart of `metric` draws now: label, cells, value."""
    return pipeline_of(app).query_one(ChartStack).chart_text(metric)


def chart_cells(app: Any, metric: str) -> str:
    """The chart cells alone (the columns between the label and the value), all rows."""
    start = LABEL_WIDTH
    end = start + pipeline_of(app).query_one(ChartStack).chart_width()
    return "".join(row[start:end] for row in chart_rows(app, metric))


def chart_value(app: Any, metric: str) -> str:
    width = pipeline_of(app).query_one(ChartStack).chart_width()
    return chart_rows(app, metric)[0][LABEL_WIDTH + width :].strip()


async def alive_and_answering(pilot: Any) -> None:
    """The app runs, shows no error screen, and a key still switches the tab."""
    app = pilot.app
    assert app.is_running
    assert not any(isinstance(s, ErrorScreen) for s in app.screen_stack)
    tabs = pipeline_of(app).query_one(TabbedContent)
    await pilot.press("3")
    await wait_for(pilot, lambda: tabs.active == "tab-events", 5, "the events tab")
    await pilot.press("1")
    await wait_for(pilot, lambda: tabs.active == "tab-telemetry", 5, "the telemetry tab")


async def open_finished_run(pilot: Any, app: Any) -> Any:
    screen = await shown_pipeline(pilot, app)
    await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
    await pilot.pause(0.5)  # the coalesced repaints of the last events
    return screen


@pytest.mark.parametrize("wire", ["tokens", "strings"])
async def test_a_diverged_loss_shows_finite_then_nan_then_infinity(
    tampered: Any, tmp_path: Path, wire: str
) -> None:
    """Loss finite (pretrain) → NaN (mid-train) → +Infinity: the chart draws the finite
    part, marks NaN and +inf columns, and its value reads ∞ — not `–`, not a crash."""
    t: Tampered = tampered(speed=SPEED)
    t.tamper.poison((lambda o: as_strings(diverge(o))) if wire == "strings" else diverge)
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_finished_run(pilot, app)
        assert screen.run_state.outcome == "completed"
        await pilot.press("w", "w")  # 15 min → 6 h → the whole run
        # The repaints are coalesced: on a loaded machine the last one (the +inf tail) can
        # land after any fixed pause, so wait for it (bounded, as every wait: 10 s ran out
        # once in a whole-suite run on a slow 2-core machine) before reading the row.
        await wait_for(
            pilot,
            lambda: POS_INF_GLYPH in chart_cells(app, "loss"),
            30,
            lambda: f"the +inf tail drawn; the loss chart shows {chart_rows(app, 'loss')}",
        )
        cells = chart_cells(app, "loss")
        assert NAN_GLYPH in cells and POS_INF_GLYPH in cells, cells
        assert any(ch in cells for ch in "▁▂▃▄▅▆▇█"), cells  # the finite part is drawn
        # The marks come in the run's order: finite, then NaN, then +inf.
        top = chart_rows(app, "loss")[0][LABEL_WIDTH:]
        assert top.index(NAN_GLYPH) < top.rindex(NAN_GLYPH) < top.index(POS_INF_GLYPH), top
        assert chart_value(app, "loss") == "∞"
        assert not [e for e in screen.tracker.log if e.type.startswith("invalid:")]
        await alive_and_answering(pilot)


async def test_hostile_but_legal_numbers_in_every_field_are_shown_not_fatal(
    tampered: Any, tmp_path: Path
) -> None:
    """NaN, ±Infinity, ±1e308 in every measured number (telemetry, progress ETA, spend,
    checkpoints, gates, faults), NaN/±Infinity in every fraction (goodput, MFU, progress)
    and 10**400 in every count: each one is accepted (none is a contract error), and the
    screen draws them bounded (`1e400`, `∞`, `NaN`, `>999d`)."""
    t: Tampered = tampered(speed=SPEED)
    t.tamper.poison(everywhere())
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_finished_run(pilot, app)
        invalid = [e.text for e in screen.tracker.log if e.type.startswith("invalid:")]
        assert invalid == []
        seen = " ".join(
            chart_value(app, m) for m in ("loss", "tokens_per_s_per_gpu", "goodput", "mem_gib")
        )
        assert any(mark in seen for mark in ("NaN", "∞", "−∞", "e308")), seen
        await alive_and_answering(pilot)
        await pilot.press("2")  # checkpoints and faults: sizes, times and steps too
        await pilot.pause(0.3)
        assert app.is_running


async def test_null_measurements_are_gaps_and_the_run_goes_on(
    tampered: Any, tmp_path: Path
) -> None:
    """A backend that sends null for every telemetry measurement (legal: no value this
    sample): the samples are accepted, the charts show `—`, the run is followed to its end."""
    t: Tampered = tampered(speed=SPEED)
    t.tamper.poison(nulls)
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_finished_run(pilot, app)
        assert screen.run_state.outcome == "completed"
        assert not [e for e in screen.tracker.log if e.type.startswith("invalid:")]
        assert screen.tracker.bank.samples > 0
        assert chart_value(app, "loss") == MISSING
        await alive_and_answering(pilot)


EDGE_TIMESTAMPS = ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z")
"""Before datetime's range once in UTC, after it, and representable but outside 1000..8999."""


async def test_events_at_the_edge_of_time_are_named_not_a_traceback(
    tampered: Any, tmp_path: Path
) -> None:
    """An event whose `ts` overflows on conversion to UTC (or lies outside years
    1000..8999) is an invalid event naming `ts`; the run is followed to its end."""
    t: Tampered = tampered(speed=SPEED)
    broken: list[int] = []

    def hook(envelope: dict[str, Any]) -> dict[str, Any]:
        if envelope.get("type") == "stage.started" and len(broken) < len(EDGE_TIMESTAMPS):
            broken.append(envelope["seq"])
            return {**envelope, "ts": EDGE_TIMESTAMPS[len(broken) - 1]}
        return envelope

    t.tamper.event_hook(hook)
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_finished_run(pilot, app)
        entries = [e for e in screen.tracker.log if e.type.startswith("invalid:")]
        assert len(broken) == len(EDGE_TIMESTAMPS)
        assert [e.seq for e in entries] == broken
        assert all("ts" in e.text for e in entries), [e.text for e in entries]
        assert screen.run_state.outcome == "completed"
        await alive_and_answering(pilot)
