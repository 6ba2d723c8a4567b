"""The silent-run banner on the run screen, and the runs list's "needs you" for a silent run.

Both draw the app's one silence detector (the watcher's `SilenceClock` for the run the
screen follows), never a second one: the test checks the banner shows what that clock
says, and goes when progress resumes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from ito_tui.alerting.needs import NeedsYou
from ito_tui.alerting.silence import SilenceClock
from ito_tui.contract import make_event
from ito_tui.tui import ItoApp
from ito_tui.tui.screens.runs_table import marks_of, row_of
from ito_tui.tui.widgets.silence_banner import Silence, SilenceBanner, silence_of, silence_text
from tests.support.apps import SIZE_IDS, SIZES, settle_quiet, snapshot_app

from .pipeline_fakes import NOW, RUN_ID, Script, summary
from .pipeline_live import shown_pipeline, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)
from .silence_fakes import QueueClient, go_silent, resumed, silent_script


def test_the_words_say_how_long_and_since_when_on_the_backends_clock() -> None:
    since = datetime(2026, 11, 29, 14, 2, 31, tzinfo=UTC)
    assert silence_text(Silence(12 * 60 + 59, since)) == (
        "⏸ silent 12m: heartbeats but no progress since 14:02 UTC"
    )
    assert silence_text(Silence(20.0, None)) == "⏸ silent <1m: heartbeats but no progress"


def test_only_a_clock_in_a_silent_spell_makes_a_banner() -> None:
    clock = SilenceClock(600.0, now=0.0)
    t0 = datetime(2026, 11, 29, 14, 2, tzinfo=UTC)
    progress = make_event("telemetry", seq=1, run_id=RUN_ID, ts=t0.isoformat(), data=_sample())
    clock.observe(progress, 0.0, state="running", stage="pretrain")
    assert silence_of(clock, 5.0) is None
    assert silence_of(None, 5.0) is None
    # Connected, no progress for 11 minutes of the backend's clock: the watcher's check.
    assert clock.check(660.0, state="running", stage="pretrain", live=True)
    silence = silence_of(clock, 660.0)
    assert silence is not None and silence.since == t0 and silence.for_s == pytest.approx(660.0)


def _sample() -> dict[str, Any]:
    from .pipeline_fakes import loss_at, sample

    return sample(1, 10, NOW, loss_at(10))


async def test_the_banner_shows_the_watchers_silence_and_goes_when_progress_resumes() -> None:
    script, split = silent_script()
    client = QueueClient(script=script.events[:split])
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await shown_pipeline(pilot, app)
        banner = screen.query_one(SilenceBanner)
        await go_silent(pilot, client, script, split)
        await wait_for(pilot, lambda: screen.tracker.last_seq == script.events[-1].seq)
        assert not banner.has_class("-silent")  # progress arrived moments ago (wall clock)
        await wait_for(pilot, lambda: banner.silence is not None, 10, "the silent banner")
        watcher = app.alerting.watcher
        assert watcher is not None
        clock = watcher.silence(RUN_ID)
        assert clock is not None and clock.silent  # the watcher's clock, not a second one
        assert banner.has_class("-silent") and banner.display
        words = str(banner.render())
        assert words.startswith("⏸ silent 2h00m: heartbeats but no progress since ")
        assert watcher.silent_runs() == frozenset({RUN_ID})
        assert RUN_ID in app.alerting.needs_you.silent  # what the runs list marks
        await client.more.put(resumed(script))
        await wait_for(pilot, lambda: banner.silence is None, 5, "the banner to go")
        assert not banner.has_class("-silent")
        await wait_for(pilot, lambda: RUN_ID not in app.alerting.needs_you.silent, 5)


def test_the_runs_list_marks_a_silent_run_in_needs_you() -> None:
    run = summary(RUN_ID, "running", "pretrain", 0.4, "2100.00")
    quiet = row_of(run, "bold", "red", marks_of(NeedsYou(), RUN_ID, NOW))
    assert quiet[2].plain == ""
    silent = row_of(run, "bold", "red", marks_of(NeedsYou(silent=frozenset({RUN_ID})), RUN_ID, NOW))
    assert silent[2].plain == "⏸ silent"


def _silent(client: QueueClient, script: Script, split: int) -> Callable[[Pilot[Any]], Any]:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await shown_pipeline(pilot, cast(ItoApp, pilot.app))
        await go_silent(pilot, client, script, split)
        banner = screen.query_one(SilenceBanner)
        await wait_for(pilot, lambda: banner.silence is not None, 10, "the silent banner")
        await settle_quiet(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_silent_run_banner(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see run_7f3a9c in pretrain with, under the run strip, the amber line
    `⏸ silent 2h00m: heartbeats but no progress since 20:22 UTC` (the last telemetry, on
    the backend's clock), the rest of the run screen as usual."""
    script, split = silent_script()
    client = QueueClient(script=script.events[:split])
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=_silent(client, script, split))


class BannerApp(App[None]):
    """The banner alone over a clock the test sets (None: no detector yet)."""

    def __init__(self) -> None:
        super().__init__()
        self.clock: SilenceClock | None = None
        self.reads = 0

    def read(self) -> SilenceClock | None:
        self.reads += 1
        return self.clock

    def compose(self) -> ComposeResult:
        yield SilenceBanner(RUN_ID, source=self.read)


async def test_the_banner_reads_the_clock_when_told_and_ticks_only_during_a_spell() -> None:
    app = BannerApp()
    async with app.run_test(size=(80, 5)) as pilot:
        banner = app.query_one(SilenceBanner)
        await asyncio.sleep(1.5)
        assert app.reads == 1  # on mount; no read a second while nothing is silent
        clock = app.clock = SilenceClock(600.0, now=0.0)
        progress = make_event("telemetry", seq=1, run_id=RUN_ID, ts=NOW.isoformat(), data=_sample())
        clock.observe(progress, 0.0, state="running", stage="pretrain")
        assert clock.check(660.0, state="running", stage="pretrain", live=True)
        banner.check()  # what the run screen does on the watcher's news
        await pilot.pause()
        assert banner.has_class("-silent")
        reads = app.reads
        await wait_for(pilot, lambda: app.reads >= reads + 2, 5, "a read a second in a spell")
        app.clock = None
        await wait_for(pilot, lambda: not banner.has_class("-silent"), 3, "the banner to go")
        reads = app.reads
        await asyncio.sleep(1.5)
        assert app.reads == reads  # and no ticking after it
