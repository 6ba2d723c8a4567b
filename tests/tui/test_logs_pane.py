"""The run screen's Logs tab, driven by keys as an operator would: following and pausing,
the hidden tab's stream, Enter on a fault, a hostile log, filters, search and errors."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static

from ito_tui.contract import LogLine
from ito_tui.format import when
from ito_tui.state.logbuffer import ShownLine
from ito_tui.tui import ItoApp
from ito_tui.tui.run_logs import MAX_LINES, PAGE, TAIL
from ito_tui.tui.screens.event_line import EventLineScreen
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.widgets.logs_pane import ABSENT, LogsPane
from tests.support.apps import assert_steady_fields, settle, snapshot_app
from tests.support.caps import CAPABILITY_NAMES, capabilities
from tests.support.waiting import wait_for

from .logs_fakes import (
    NCCL_TIMEOUT,
    FakeLogsClient,
    fault_time,
    log_line,
    trainer_log,
    with_node_failure,
)
from .pipeline_fakes import NOW, RUN_ID, T0, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


def logs_app(client: FakeLogsClient) -> ItoApp:
    return snapshot_app(client, now=NOW, start=RUN_ID)


def pane_of(pilot: Pilot[Any]) -> LogsPane:
    return pilot.app.screen.query_one(LogsPane)


def caption(pilot: Pilot[Any]) -> str:
    return str(pane_of(pilot).query_one("#logs-caption", Static).render())


def shown_texts(pane: LogsPane) -> list[str]:
    """The rows the view draws now, as plain text."""
    view = pane.view
    return [view.render_line(y).text for y in range(view.scrollable_content_region.height)]


def on_screen(pane: LogsPane) -> list[ShownLine]:
    """The buffer's lines the view shows now."""
    view = pane.view
    return [pane.buffer.line(i) for i in range(view.top_index, view.bottom_index + 1)]


async def open_logs(pilot: Pilot[Any]) -> LogsPane:
    await settle(pilot)
    await pilot.press("4")
    pane = pane_of(pilot)
    await wait_for(pilot, lambda: len(pane.buffer) > 0 and not pane.repaints.pending, what="lines")
    assert_steady_fields(pane)
    return pane


async def test_follow_pauses_on_scroll_up_says_so_and_resumes_on_end() -> None:
    client = FakeLogsClient(script=pretrain_script().events)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        view = pane.view
        assert view.following and caption(pilot).startswith("following")
        assert view.bottom_index == len(pane.buffer) - 1  # the newest line is on screen
        await pilot.press("pageup")
        assert not view.following
        assert caption(pilot).startswith("paused — End to follow, 0 new")
        top = pane.buffer.line(view.top_index).seq
        last = client.log_lines[-1].seq
        client.push([log_line(last + i, NOW, f"late line {i}") for i in range(1, 6)])
        await wait_for(pilot, lambda: "5 new" in caption(pilot), what="the count of new lines")
        assert pane.buffer.line(view.top_index).seq == top  # the view stayed where it was
        await pilot.press("end")
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        assert view.following and caption(pilot).startswith("following")
        # The stream kept reading while paused: End follows it, it does not open another.
        assert len(client.streams()) == 1 and client.open_logs == 1
        assert pane.buffer.line(view.bottom_index).seq == last + 5
        assert "late line 5" in shown_texts(pane)[view.bottom_index - view.top_index]


def minutes_from(start: datetime) -> list[LogLine]:
    """300 lines a minute apart on the run's clock (`sim_ts`) from `start` on."""
    return [
        log_line(i, NOW, f"line {i}", sim_ts=(start + timedelta(minutes=i)).isoformat())
        for i in range(1, 301)
    ]


async def test_the_caption_names_the_day_of_the_top_row_when_it_is_not_today() -> None:
    """A row says only its time of day: a pane left open for days, or a demo's clock days
    ahead (`sim_ts`), says from which day the rows are, and follows a scroll."""
    ahead = NOW + timedelta(days=2, hours=1)  # Dec 2 00:00 against the app's Nov 29
    client = FakeLogsClient(script=pretrain_script().events, log_lines=minutes_from(ahead))
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        view = pane.view
        top = pane.buffer.line(view.top_index).at
        assert caption(pilot).startswith(f"following · from {when(top, NOW)} · "), caption(pilot)
        await pilot.press("home")
        await wait_for(pilot, lambda: view.top_index == 0, what="the oldest line")
        # The caption follows the scroll at the pane's next paint, not with it.
        oldest = "paused — End to follow, 0 new · from Dec 2 00:01 UTC"
        await wait_for(pilot, lambda: caption(pilot).startswith(oldest), what=oldest)
    # Rows on screen that cross midnight name both days.
    late = NOW + timedelta(days=2, minutes=50)  # Dec 1 23:50
    client = FakeLogsClient(script=pretrain_script().events, log_lines=minutes_from(late))
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        view = pane.view
        assert caption(pilot).startswith("following · from Dec 2 "), caption(pilot)
        await pilot.press("home")
        await wait_for(pilot, lambda: view.top_index == 0, what="the oldest line")
        bottom = pane.buffer.line(view.bottom_index).at
        assert bottom.day == 2 and bottom.minute > 0  # the screen holds both days
        both = f"paused — End to follow, 0 new · Dec 01 23:51:00 → Dec 02 {bottom:%H:%M:%S} UTC · "
        await wait_for(pilot, lambda: caption(pilot).startswith(both), what=lambda: caption(pilot))
    # Today's rows: no day.
    today = [log_line(i, NOW - timedelta(minutes=9 - i), f"line {i}") for i in range(1, 10)]
    client = FakeLogsClient(script=pretrain_script().events, log_lines=today)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        await open_logs(pilot)
        assert " UTC" not in caption(pilot), caption(pilot)


async def test_end_after_the_stream_failed_opens_it_again_after_the_last_line() -> None:
    client = FakeLogsClient(script=pretrain_script().events)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        await pilot.press("pageup")
        client.break_streams()
        await wait_for(pilot, lambda: "log stream:" in caption(pilot), what="the failure said")
        assert not pane.streaming and client.open_logs == 0
        held = pane.buffer.last_seq
        client.break_streams(False)
        last = client.log_lines[-1].seq
        client.push([log_line(last + 1, NOW, "after the failure")])
        await pilot.press("end")
        await wait_for(pilot, lambda: pane.buffer.last_seq == last + 1, what="the new line")
        assert len(client.streams()) == 2 and client.streams()[-1]["since_seq"] == held
        assert pane.view.following and pane.streaming


async def test_a_hidden_tab_closes_its_stream_and_resumes_after_the_last_line() -> None:
    client = FakeLogsClient(script=pretrain_script().events)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        assert client.open_logs == 1
        held = pane.buffer.last_seq
        await pilot.press("1")
        await wait_for(pilot, lambda: client.open_logs == 0, what="the stream to close")
        last = client.log_lines[-1].seq
        client.push([log_line(last + i, NOW, f"while hidden {i}") for i in range(1, 4)])
        await pilot.pause(0.2)
        assert pane.buffer.last_seq == held  # nothing read while hidden
        await pilot.press("4")
        await wait_for(pilot, lambda: pane.buffer.last_seq == last + 3, what="the missed lines")
        assert client.streams()[-1]["since_seq"] == held  # resumed, not replayed
        seqs = [pane.buffer.line(i).seq for i in range(len(pane.buffer))]
        assert seqs == sorted(set(seqs))  # every line once, in order


async def test_a_gap_too_large_for_the_buffer_starts_again_from_the_newest() -> None:
    client = FakeLogsClient(script=pretrain_script().events)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        await pilot.press("1")
        await wait_for(pilot, lambda: client.open_logs == 0, what="the stream to close")
        last = client.log_lines[-1].seq
        gap = MAX_LINES // 2 + 1  # more than resuming may replay
        client.push([log_line(last + i, NOW, f"while hidden {i}") for i in range(1, gap + 1)])
        await pilot.press("4")
        await wait_for(pilot, lambda: pane.buffer.last_seq == last + gap, what="the newest")
        assert client.streams()[-1]["since_seq"] is None
        assert client.streams()[-1]["tail"] == TAIL
        assert len(pane.buffer) == TAIL  # the newest lines, not the whole gap
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        assert caption(pilot).startswith("following · filter: all")


async def test_scrolling_back_past_the_buffer_fetches_older_pages_in_place() -> None:
    client = FakeLogsClient(script=pretrain_script().events, log_lines=trainer_log(3000))
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        first = pane.buffer.first_seq
        assert len(pane.buffer) == TAIL and first is not None
        await pilot.press("home")  # the oldest line held: the page before it is fetched
        await wait_for(pilot, lambda: len(pane.buffer) == TAIL + PAGE, what="the older page")
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        pages = [r for r in client.log_reads if r["kind"] == "page"]
        assert pages[-1]["before_seq"] == first and pages[-1]["limit"] == PAGE
        # The view stayed on the line it showed; the older ones are above it now.
        assert pane.buffer.line(pane.view.top_index).seq == first
        assert pane.buffer.first_seq == first - PAGE
        assert not pane.view.following and caption(pilot).startswith("paused")


async def test_enter_on_a_fault_in_the_timeline_opens_the_logs_at_the_nccl_timeout() -> None:
    script = pretrain_script()
    events, failed_at = with_node_failure(script)
    detected = fault_time(events)
    # Five hours of trainer lines: the tail the tab replays starts long after the fault.
    lines = trainer_log(3000, fault_at=detected, xid_at=failed_at)
    client = FakeLogsClient(script=events, log_lines=lines)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("2", "enter")
        screen = pilot.app.screen
        assert isinstance(screen, PipelineScreen)
        pane = pane_of(pilot)
        view = pane.view
        await wait_for(pilot, lambda: view.current is not None, what="the line at the fault")
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        assert screen.query_one("#tabs").active == "tab-logs"  # type: ignore[attr-defined]
        assert not view.following
        line = pane.buffer.line(view.current or 0)
        # The fault's detection, where the watchdog timed out (the Xid came 95 s before).
        assert line.at == detected and NCCL_TIMEOUT in line.text and line.rank == 8
        assert view.top_index <= (view.current or 0) <= view.bottom_index
        assert "at fault f1 node_failure on gpu-node-07" in caption(pilot)
        pages = [r for r in client.log_reads if r["kind"] == "page"]
        assert len(pages) <= 20  # found by bisection, not by paging through 3,000 lines


async def test_enter_on_a_node_event_in_the_timeline_opens_the_logs_at_its_xid() -> None:
    events, failed_at = with_node_failure(pretrain_script())
    lines = trainer_log(3000, fault_at=fault_time(events), xid_at=failed_at)
    client = FakeLogsClient(script=events, log_lines=lines)
    async with logs_app(client).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("2", "down", "enter")  # the fault, then its node's failure
        pane = pane_of(pilot)
        await wait_for(pilot, lambda: pane.view.current is not None, what="the line")
        line = pane.buffer.line(pane.view.current or 0)
        assert line.at == failed_at and "Xid" in line.text
        assert "at node gpu-node-07 failed" in caption(pilot)


async def test_the_event_line_view_opens_the_logs_at_its_event() -> None:
    script = pretrain_script()
    at = fault_time(script.events)
    client = FakeLogsClient(script=script.events, log_lines=trainer_log(3000, fault_at=at))
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PipelineScreen)
        entry = next(e for e in screen.tracker.log if e.type == "fault.detected")
        await pilot.app.push_screen(EventLineScreen(entry))
        await pilot.press("l")
        pane = pane_of(pilot)
        await wait_for(pilot, lambda: pane.view.current is not None, what="the line")
        assert pilot.app.screen is screen
        assert pane.buffer.line(pane.view.current or 0).at == at
        assert f"at event {entry.seq} fault.detected" in caption(pilot)


HOSTILE = [
    "\x1b[31mred alert\x1b[0m done",
    "progress 10%\r progress 50%\r progress 100%",
    "nul\x00here",
    "[bold]not markup[/bold] [link=http://x]x[/link]",
    "\x1b]0;owned title\x07after osc",
]


def fast_line(seq: int, text: str) -> LogLine:
    """A valid LogLine built without validation (10^5 of them in a burst)."""
    return LogLine.model_construct(
        seq=seq, ts=NOW, sim_ts=None, rank=seq % 32, node=None, replica_id=None,
        level="debug", source="trainer", text=text, cut=False,
    )  # fmt: skip


async def test_a_hostile_log_shows_literally_and_keys_answer_during_a_burst() -> None:
    lines = [log_line(i + 1, T0 + timedelta(seconds=i), t) for i, t in enumerate(HOSTILE)]
    client = FakeLogsClient(script=pretrain_script().events, log_lines=lines)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        texts = "\n".join(shown_texts(pane))
        assert "\x1b" not in texts and "\r" not in texts and "\x00" not in texts
        assert "red alert done" in texts and "progress 100%" in texts
        assert "nul␀here" in texts
        assert "[bold]not markup[/bold] [link=http://x]x[/" in texts  # cut at the pane's edge
        assert "owned title" not in texts and "after osc" in texts
        burst = 100_000
        client.push(
            [fast_line(6 + i, f"\x1b[2Kflood {i}\r") for i in range(burst)]
        )  # 10^5 lines at once
        await pilot.press("pageup")
        # The key was handled while the burst was still being read.
        assert not pane.view.following
        assert pane.buffer.high_seq < 5 + burst
        await wait_for(pilot, lambda: not pane.repaints.pending and client.open_logs == 0,
                       what="the paused view to stop reading")  # fmt: skip
        assert len(pane.buffer) <= MAX_LINES
        assert "newer lines not loaded" in caption(pilot)
        await pilot.press("end")
        await wait_for(pilot, lambda: pane.buffer.last_seq == 5 + burst, what="the newest")
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        assert pane.view.following
        assert "flood 99999" in shown_texts(pane)[pane.view.bottom_index - pane.view.top_index]


async def test_without_the_capability_the_tab_says_so_and_nothing_else_changes() -> None:
    caps = capabilities(*(n for n in CAPABILITY_NAMES if n != "runs.logs"), missing=["runs.logs"])
    client = FakeLogsClient(script=pretrain_script().events, caps=caps)
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await pilot.pause(0.2)
        pane = pane_of(pilot)
        absent = pane.query_one("#logs-absent", Static)
        assert absent.display and str(absent.render()) == ABSENT
        assert not pane.view.display
        assert client.log_reads == []  # never asked
        assert isinstance(pilot.app.screen, PipelineScreen)  # no capability screen pushed
        await pilot.press("1")
        assert pilot.app.screen.query_one("#tabs").active == "tab-telemetry"  # type: ignore[attr-defined]


async def test_filters_go_to_the_server_and_the_caption_names_them() -> None:
    events, failed_at = with_node_failure(pretrain_script())
    start = failed_at - timedelta(minutes=10)  # 100 lines before the failure, 200 after
    client = FakeLogsClient(
        script=events, log_lines=trainer_log(300, fault_at=failed_at, start=start)
    )
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        await pilot.press("pageup")  # paused: the filter follows again, with one stream
        await pilot.press("l")
        await wait_for(pilot, lambda: client.streams()[-1]["query"].level == "info", what="l")
        await wait_for(pilot, lambda: not pane.repaints.pending, what="the repaint")
        assert len(client.streams()) == 2 and client.open_logs == 1 and pane.view.following
        await pilot.press("l", "s")
        await wait_for(pilot, lambda: client.streams()[-1]["query"].sources == ("trainer",),
                       what="s")  # fmt: skip
        assert client.streams()[-1]["query"].level == "warning"
        assert "filter: warning+ · trainer" in caption(pilot)
        await pilot.press("c", "r", *"8-9", "enter")
        await wait_for(pilot, lambda: client.streams()[-1]["query"].ranks == (8, 9), what="r")
        await wait_for(pilot, lambda: len(pane.buffer) == 4, what="ranks 8 and 9's lines")
        assert {pane.buffer.line(i).rank for i in range(4)} == {8, 9}
        assert "filter: rank 8,9" in caption(pilot)
        await pilot.press("r", *"x", "enter")
        assert "not a rank list" in caption(pilot)


async def test_search_marks_matches_and_n_and_shift_n_move_between_them() -> None:
    events, failed_at = with_node_failure(pretrain_script())
    start = failed_at - timedelta(minutes=10)  # 100 lines before the failure, 200 after
    client = FakeLogsClient(
        script=events, log_lines=trainer_log(300, fault_at=failed_at, start=start)
    )
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        view = pane.view
        await pilot.press("slash", *"watchdog", "enter")
        assert not view.following and view.current is not None
        newest = view.current
        assert pane.buffer.line(newest).rank == 11  # the newest match: rank 11's timeout
        await pilot.press("N")
        assert view.current == newest - 1 and pane.buffer.line(newest - 1).rank == 10
        await pilot.press("n")
        assert view.current == newest
        await pilot.press("n")
        assert view.current == newest and "no newer “watchdog”" in caption(pilot)
        await pilot.press("e")
        line = pane.buffer.line(view.current)
        assert line.level == "error" and "Xid" in line.text  # the first error held


async def test_a_slashed_search_is_a_regex_and_a_bad_one_says_so() -> None:
    events, failed_at = with_node_failure(pretrain_script())
    start = failed_at - timedelta(minutes=10)
    client = FakeLogsClient(
        script=events, log_lines=trainer_log(300, fault_at=failed_at, start=start)
    )
    async with logs_app(client).run_test(size=(120, 40)) as pilot:
        pane = await open_logs(pilot)
        view = pane.view
        await pilot.press("slash", *r"/rank (8|9)\]/", "enter")
        assert view.current is not None and pane.buffer.line(view.current).rank == 9
        await pilot.press("N")
        assert pane.buffer.line(view.current).rank == 8
        await pilot.press("N")
        assert "no older match held" in caption(pilot)
        await pilot.press("slash", *"/rank (/", "enter")
        assert "not a regex" in caption(pilot)
