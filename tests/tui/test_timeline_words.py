"""The Ckpts tab's node events and checkpoints: the event log's words for the same event, and
a time not on today's date carries its date (issue 17: one fact in one form on every tab)."""

from __future__ import annotations

from datetime import timedelta

from ito_tui.contract import EventBase, make_event
from ito_tui.tui.screens.pipeline import PipelineScreen
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .logs_fakes import FakeLogsClient, with_node_failure
from .pipeline_fakes import NOW, RUN_ID, pretrain_script
from .shell_helpers import isolated_user_dirs, screen_text  # noqa: F401 (autouse fixture)


def script_with_node_events() -> list[EventBase]:
    """The pretrain script with a node failure and, 30 s before it, a straggler."""
    events, failed_at = with_node_failure(pretrain_script())
    straggler = {
        "hostname": "gpu-node-03",
        "rank": 24,
        "step_time_s": 1.52,
        "fleet_p50_s": 1.11,
    }
    events.append(
        make_event(
            "straggler.detected",
            seq=len(events) + 1,
            run_id=RUN_ID,
            ts=failed_at - timedelta(seconds=30),
            data=straggler,
        )
    )
    return events


async def test_node_events_read_as_the_event_log_writes_them() -> None:
    client = FakeLogsClient(script=script_with_node_events())
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(160, 40)) as pilot:  # wide: neither line is cut
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PipelineScreen)
        await pilot.press("2")
        await wait_for(pilot, lambda: "Node events (2)" in screen_text(pilot), what="the tab")
        logged = {e.type: e.text for e in screen.tracker.log}
        failed, straggler = logged["node.failed"], logged["straggler.detected"]
        assert failed == "node gpu-node-07 failed: Xid 79 on GPU 3 (fault f1)"
        assert straggler == "straggler gpu-node-03 (rank 24) step 1.52 s vs fleet 1.11 s (1.37×)"
        text = screen_text(pilot)
        assert failed in text and straggler in text
        assert "node.failed" not in text and "straggler.detected" not in text
        (line,) = [row for row in text.splitlines() if failed in row]
        stamp = line.split(failed)[0].strip().split()[-1]
        assert stamp.count(":") == 2  # the day of the session's clock: the time alone


async def test_a_node_event_and_a_checkpoint_from_another_day_carry_their_date() -> None:
    client = FakeLogsClient(script=script_with_node_events())
    app = snapshot_app(client, now=NOW + timedelta(days=2), start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PipelineScreen)
        await pilot.press("2")
        await wait_for(pilot, lambda: "Node events (2)" in screen_text(pilot), what="the tab")
        failed = next(e for e in screen.tracker.log if e.type == "node.failed")
        day = f"{failed.at:%b %d}"
        lines = screen_text(pilot).splitlines()
        (line,) = [row for row in lines if failed.text in row]
        assert f"{day} {failed.at:%H:%M:%S} {failed.text}" in line
        saved = [row for row in lines if "saved UTC" in row]
        assert saved, "the checkpoint table says when each was saved at this width"
        checkpoint = screen.run_state.checkpoints[-1]
        assert any(f"{checkpoint.created_at:%b %d %H:%M:%S}" in row for row in lines)
