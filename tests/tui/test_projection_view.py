"""The run screen's projection: the finish and final spend (p50/p90 from the measured pace)
under the current stage, and a warning — in the header, in the stage list, and one alert —
when the p90 finish passes the booking's end.

run_7f3a9c's fake script trains at 3 s a step (30 s per 10 steps), so at step 520 of 1,200
the measured pace puts the finish near 21:14 UTC; its booking is made to end at 21:00.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.contract import Booking
from ito_tui.desk_sim.catalog import seed_bookings
from ito_tui.state.projection import Projection
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.stages import StageList, projection_lines
from tests.support.apps import SIZE_IDS, SIZES, settle, settle_quiet, snapshot_app

from .pipeline_fakes import BOOKING_ID, NOW, RUN_ID, T0, FakeRunClient, pretrain_script
from .pipeline_live import pipeline_of, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

ENDS_AT = T0 + timedelta(hours=1)
"""21:00 UTC: the booking ends before the measured pace's p90 finish (about 21:14)."""


def booking(ends_at: Any = ENDS_AT) -> Booking:
    base = seed_bookings(NOW)[0]
    return base.model_copy(update={"booking_id": BOOKING_ID, "ends_at": ends_at})


def client(ends_at: Any = ENDS_AT) -> FakeRunClient:
    return FakeRunClient(script=pretrain_script().events, booking_list=[booking(ends_at)])


def stage_text(screen: Any) -> str:
    return str(screen.query_one(StageList).render())


async def projected(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    screen = pipeline_of(pilot.app)  # type: ignore[arg-type]
    await wait_for(pilot, lambda: screen.projection.booking_ends_at is not None, 5)
    await settle_quiet(pilot)


async def test_a_p90_past_the_booking_end_warns_in_the_header_the_stages_and_once_as_alert() -> (
    None
):
    fake = client()
    app = snapshot_app(fake, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await projected(pilot)
        screen = pipeline_of(app)
        proj = screen.projection.latest
        assert proj is not None and proj.known and proj.late and not proj.over
        assert proj.booking_ends_at == ENDS_AT
        header = screen.query_one(HeaderStrip)
        assert header.warning == "⚠ p90 past booking end"
        assert "⚠ p90 past booking end" in str(header.render())
        text = stage_text(screen)
        assert proj.finish_p50 is not None and proj.finish_p90 is not None
        assert proj.finish_p90 > ENDS_AT  # about 21:14 at 3 s a step
        assert f" ⚠ finish ~{proj.finish_p50:%H:%M} UTC" in text
        assert f"p90 {proj.finish_p90:%H:%M} UTC" in text
        spend = proj.words.split(" · ")[1]
        assert spend.startswith("spend ~$17") and f"   {spend}" in text  # within $25,000
        alerter = app.alerter
        late = [a for a in alerter.sent if a.kind == "projection"]
        assert len(late) == 1 and late[0].title == "Will finish late"
        screen.repaints.mark("strip")  # painted again: the same crossing alerts no more
        await settle(pilot)
        assert len([a for a in alerter.sent if a.kind == "projection"]) == 1


async def test_a_booking_that_ends_later_gives_the_projection_without_a_warning() -> None:
    fake = client(NOW + timedelta(days=3))
    app = snapshot_app(fake, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await projected(pilot)
        screen = pipeline_of(app)
        assert screen.query_one(HeaderStrip).warning == ""
        text = stage_text(screen)
        proj = screen.projection.latest
        assert proj is not None
        finish = proj.words.split(" · ")[0]
        assert finish.startswith("finish ~21:1") and f"   {finish}" in text  # one row
        assert "⚠" not in text
        assert not [a for a in app.alerter.sent if a.kind == "projection"]


def test_the_finish_splits_where_it_does_not_fit_and_the_warning_marks_its_rows() -> None:
    proj = Projection(
        "pretrain", None, None, None, None, 10.0, 20.0, True, True, 60.0,
        "finish ~Dec 3 14:20 UTC (p90 Dec 4 02:00 UTC) · spend ~$28.1K (p90 $31.0K)",
        "⚠ p90 past booking end · ⚠ p90 over budget",
    )  # fmt: skip
    assert projection_lines(proj, 80) == [
        (" ⚠ finish ~Dec 3 14:20 UTC (p90 Dec 4 02:00 UTC)", True),
        (" ⚠ spend ~$28.1K (p90 $31.0K)", True),
    ]
    assert projection_lines(proj, 38) == [
        (" ⚠ finish ~Dec 3 14:20 UTC", True),
        ("     p90 Dec 4 02:00 UTC", True),
        (" ⚠ spend ~$28.1K (p90 $31.0K)", True),
    ]
    assert projection_lines(None, 38) == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_projection_warning(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see run_7f3a9c in pretrain with `⚠ p90 past booking end` in amber in the
    header (beside DEMO), and under pretrain's progress in the stage list, in amber,
    ` ⚠ finish ~21:14 UTC` and its `p90 21:15 UTC` (to the second; on one row at 120x40),
    then `spend ~$17.1K (p90 $17.3K)` unmarked (within the $25,000 budget)."""
    app = snapshot_app(client(), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=projected)


async def test_a_p90_swinging_across_the_booking_end_alerts_once() -> None:
    # Early in a run (and at a demo's speed) the p90 crosses the line and back at every
    # repaint: the showcase at 10,000x raised 18 toasts in ten seconds.
    app = snapshot_app(client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await projected(pilot)
        screen = pipeline_of(app)
        late = screen.projection.latest
        assert late is not None and late.late
        inside = replace(
            late, late=False, warning="", finish_p90=ENDS_AT - timedelta(hours=1),
            remaining_s_p90=60.0,
        )  # fmt: skip
        swings = iter([inside, late] * 5)
        screen.tracker.projection = lambda **_: next(swings)  # type: ignore[method-assign]
        for _ in range(10):
            screen.projection.paint()
        assert len([a for a in app.alerter.sent if a.kind == "projection"]) == 1
        assert screen.query_one(HeaderStrip).warning == "⚠ p90 past booking end"


async def test_a_new_projection_repaints_the_list_only_when_its_rows_read_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every telemetry sample brings a new projection; the list compares only the rows it
    draws of it (comparing the whole list cost 0.5 ms an event, bench #4), and must still
    redraw when those rows read otherwise."""
    app = snapshot_app(client(), now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await projected(pilot)
        stages = pipeline_of(app).query_one(StageList)
        proj = stages.projection
        assert proj is not None and proj.known
        refreshed: list[tuple[Any, ...]] = []
        real_refresh = stages.refresh

        def spy(*regions: Any, **kw: Any) -> Any:
            refreshed.append(regions)
            return real_refresh(*regions, **kw)

        monkeypatch.setattr(stages, "refresh", spy)
        stages.projection = replace(proj, measured_s=proj.measured_s + 30.0)  # same rows
        assert stages.projection != proj and refreshed == []
        later = proj.words.replace("spend ~$17", "spend ~$19", 1)
        assert later != proj.words
        stages.projection = replace(proj, words=later)
        assert refreshed, "the spend row reads otherwise: repainted"
        await settle(pilot)
        assert "spend ~$19" in stage_text(pipeline_of(app))
