"""The Ckpts tab's node events and checkpoints: the event log's words for the same event, and
a time not on today's date carries its date (issue 17: one fact in one form on every tab)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.app import App, ComposeResult

from ito_tui.contract import EventBase, make_event
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.themes import app_variable_defaults
from ito_tui.tui.widgets.timeline import Timeline
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


@pytest.mark.parametrize(
    ("size", "lines"),
    [
        ((160, 40), ["Faults (1) · SLO detect < 10 min, resume < 15 min"]),
        ((100, 30), ["Faults (1)", "SLO detect < 10 min, resume < 15 min"]),
        ((80, 24), ["Faults (1)", "SLO detect < 10 min, resume < 15 min"]),
    ],
    ids=["160x40", "100x30", "80x24"],
)
async def test_the_faults_title_breaks_between_its_phrases(
    size: tuple[int, int], lines: list[str]
) -> None:
    events, _failed_at = with_node_failure(pretrain_script())
    app = snapshot_app(FakeLogsClient(script=events), now=NOW, start=RUN_ID)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: "Faults (1)" in screen_text(pilot), what="the tab")
        rows = [row.split("▕")[-1].strip() for row in screen_text(pilot).splitlines()]
        first = rows.index(lines[0])
        assert rows[first : first + len(lines)] == lines


class NarrowTimeline(App[None]):
    CSS = "Timeline { width: 30; }"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # The app's own colour variables ($gate-failed …), as ItoApp defines them.
        return app_variable_defaults(self.current_theme.to_color_system().generate())

    def compose(self) -> ComposeResult:
        yield Timeline()


async def test_a_pane_too_narrow_for_the_slo_line_breaks_it_between_its_phrases() -> None:
    async with NarrowTimeline().run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        rows = [row.strip() for row in screen_text(pilot).splitlines()]
        first = rows.index("Faults (0)")
        assert rows[first : first + 3] == ["Faults (0)", "SLO detect < 10 min,", "resume < 15 min"]
