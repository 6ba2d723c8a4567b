"""The run screen's Nodes tab, as the operator drives it: the real app (`make_app`) over the
support fake's run and fleet (`nodes_fakes`), keys only, read through the pane's rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

from ito_tui.contract import make_event
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.widgets.fleet_table import FleetTable
from ito_tui.tui.widgets.nodes_pane import MISSING_TEXT, NodesPane
from tests.support.apps import record_alerts, settle, snapshot_app
from tests.support.caps import capabilities

from .nodes_fakes import fleet, host
from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, pretrain_script
from .pipeline_live import shown_pipeline, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)
from .silence_fakes import QueueClient

FAST = 0.05
"""A refresh limit for tests that count refreshes (the backend's `fleet_refresh_s`): the
client holds it to its 1 s floor (`client.policy.fleet_refresh_s`)."""
FLOOR = 1.0


def client_for(fleet_model: Any, *, refresh_s: float = 5.0, **kw: Any) -> FakeRunClient:
    return FakeRunClient(
        script=pretrain_script().events,
        fleet_model=fleet_model,
        caps=capabilities(fleet_refresh_s=refresh_s),
        **kw,
    )


async def open_nodes(pilot: Pilot[Any]) -> tuple[PipelineScreen, NodesPane, FleetTable]:
    await settle(pilot)
    screen = await shown_pipeline(pilot, pilot.app)  # type: ignore[arg-type]
    await pilot.press("5")
    pane = screen.query_one(NodesPane)
    return screen, pane, pane.query_one(FleetTable)


def rows(table: FleetTable) -> list[str]:
    return [table.line_text(i) for i in range(table.line_count)]


def fits(table: FleetTable) -> bool:
    width = table.scrollable_content_region.width
    return all(len(line) <= width for line in rows(table))


async def test_a_straggler_shows_first_with_glyph_and_word_and_s_cycles_the_sort() -> None:
    client = client_for(fleet(straggler=2))
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        _, pane, table = await open_nodes(pilot)
        await wait_for(pilot, lambda: pane.view is not None, what="the fleet")
        assert client.fleet_reads == [RUN_ID]
        lines = rows(table)
        # At 80 columns the Nodes tab has the whole width (the stage list gives way): a
        # node is one row: state, host, p50, ratio to the median, its 8 GPUs.
        assert len(lines) == 4 and fits(table)
        assert lines[0].startswith(f"▲ straggler {host(2)} 1.52s 1.36×")
        # Its 8 GPUs: half used (▅), hot (89–93 °C).
        assert lines[0].split()[-1] == "▅93▅91▅89▅92▅90▅93▅91▅89"
        assert all(line.startswith("✓ healthy") for line in lines[1:])
        await pilot.press("s")  # by name
        assert [line.split()[2] for line in rows(table)] == [host(i) for i in range(1, 5)]
        await pilot.press("s")  # slowest first: the straggler again
        assert rows(table)[0].startswith("▲ straggler")
        await pilot.press("s")
        assert pane.sort == "worst"


async def test_the_status_says_when_on_the_runs_clock_with_its_day() -> None:
    """A demo's fleet carries `sim_ts`: the status line is on that clock, as the Events
    list and the Logs tab are, and names its day when it is not today's."""
    ahead = fleet(straggler=2).model_copy(update={"sim_ts": NOW + timedelta(days=2, hours=1)})
    app = snapshot_app(client_for(ahead), now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 30)) as pilot:
        _, pane, _ = await open_nodes(pilot)
        await wait_for(pilot, lambda: pane.fleet is not None, what="the fleet")
        status = str(pane.query_one("#fleet-status").render())
        assert status.endswith("as of Dec 2 00:00 UTC"), status


async def test_during_a_failure_the_failed_node_is_first_and_the_quorum_says_below() -> None:
    client = client_for(fleet(straggler=2, failed=3))
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        _, pane, table = await open_nodes(pilot)
        await wait_for(pilot, lambda: pane.view is not None, what="the fleet")
        lines = rows(table)
        assert len(lines) == 4 and fits(table)  # one row each at 120 columns
        assert lines[0].startswith(f"✗ failed    {host(3)}")
        assert "xid 1 nccl 2" in lines[0]
        # Drawn in the failed colour (a text's base style is lost by the line API).
        first = next(iter(table.render_line(0)))
        assert first.style is not None
        assert first.style.color == table.get_component_rich_style("fleet--failed").color
        assert lines[1].startswith("▲ straggler")
        quorum = pane.query_one("#fleet-quorum")
        assert quorum.has_class("-below")
        assert "below minimum" in str(quorum.render())
        replicas = str(pane.query_one("#fleet-replicas").render())
        assert "✗ r2 lost step 12,100" in replicas


async def test_128_nodes_scroll_and_a_refresh_repaints_only_what_changed() -> None:
    client = client_for(fleet(128, per_replica=8, straggler=77), refresh_s=FAST)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        _, pane, table = await open_nodes(pilot)
        await wait_for(pilot, lambda: pane.view is not None, what="the fleet")
        assert table.line_count == 128 and rows(table)[0].startswith(f"▲ straggler {host(77)}")
        assert table.max_scroll_y > 0
        await pilot.press("end")
        assert table.scroll_offset.y == table.max_scroll_y
        await pilot.press("home")
        assert table.scroll_offset.y == 0
        # One GPU's temperature moves a degree: that cell is repainted, not the table.
        before = table.repainted_cells
        client.fleet_model = fleet(128, per_replica=8, straggler=77, tick=1, tick_node=77)
        await wait_for(pilot, lambda: pane.fleet is client.fleet_model, what="the refresh")
        await pilot.pause()
        assert 0 < table.repainted_cells - before <= 2


async def test_hidden_the_tab_asks_nothing_and_shown_it_refreshes_again() -> None:
    client = client_for(fleet(), refresh_s=FAST)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause(5 * FAST)
        assert client.fleet_reads == []  # never shown: never asked
        await open_nodes(pilot)
        await wait_for(pilot, lambda: len(client.fleet_reads) >= 2, what="refreshes")
        await pilot.press("1")
        hidden_at = len(client.fleet_reads)
        await pilot.pause(1.5 * FLOOR)  # more than a refresh's interval
        assert len(client.fleet_reads) <= hidden_at + 1  # at most the one in flight
        await pilot.press("5")
        await wait_for(pilot, lambda: len(client.fleet_reads) > hidden_at + 1, what="refresh")


async def test_a_fleet_event_on_the_stream_asks_the_tab_for_an_earlier_refresh() -> None:
    client = QueueClient(
        script=pretrain_script().events,
        fleet_model=fleet(),
        caps=capabilities(fleet_refresh_s=3600.0),
    )
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, pane, _ = await open_nodes(pilot)
        await wait_for(pilot, lambda: pane.view is not None, what="the fleet")
        refresher = pane.refresher
        assert refresher is not None
        pokes: list[int] = []
        refresher.poke = lambda: pokes.append(1)  # type: ignore[method-assign]
        seq = screen.tracker.last_seq
        data = {"hostname": host(3), "replica_id": "r2", "fault_id": "f2"}
        event = make_event("node.failed", seq=seq + 1, run_id=RUN_ID, ts=NOW.isoformat(), data=data)
        await client.more.put(event)
        await wait_for(pilot, lambda: bool(pokes), what="the event to reach the tab")
        await pilot.pause()
        assert pokes == [1] and screen.tracker.last_seq == seq + 1


@pytest.mark.parametrize(
    ("tab", "covered", "toasted"), [("5", False, False), ("1", False, True), ("5", True, True)]
)
async def test_on_the_nodes_tab_a_nodes_alert_rings_but_needs_no_toast(
    tab: str, covered: bool, toasted: bool
) -> None:
    client = QueueClient(script=pretrain_script().events, fleet_model=fleet(straggler=2))
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    toasts, bells = record_alerts(app)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, pane, _ = await open_nodes(pilot)
        await wait_for(pilot, lambda: pane.view is not None, what="the fleet")
        await pilot.press(tab)
        await pilot.pause()
        if covered:  # another screen over the run's (Decisions, help): the tab is not seen
            await app.push_screen(Screen())
            await pilot.pause()
        assert screen.alerter is not None
        before = (list(toasts), len(bells))
        seq = screen.tracker.last_seq + 1
        data = {"hostname": host(2), "step_time_s": 1.6, "fleet_p50_s": 1.1}
        event = make_event(
            "straggler.detected", seq=seq, run_id=RUN_ID, ts=NOW.isoformat(), data=data
        )
        await client.more.put(event)
        await wait_for(pilot, lambda: screen.tracker.last_seq == seq, what="the event")
        await pilot.pause()
        # The Nodes tab shows the straggler's row at the top, marked: a toast would repeat
        # it. The alert is raised (the bell, the title) on any tab, covered or not.
        assert "straggler" in [alert.kind for alert in screen.alerter.sent]
        assert len(bells) > before[1]
        assert ("Straggler" in toasts[len(before[0]) :]) is toasted


async def test_without_the_capability_the_tab_says_so_and_nothing_else_changes() -> None:
    client = FakeRunClient(
        script=pretrain_script().events,
        fleet_model=fleet(),
        caps=capabilities(missing=["runs.fleet"]),
    )
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, pane, _ = await open_nodes(pilot)
        await pilot.pause()
        assert pane.has_class("-missing") and pane.missing
        assert str(pane.query_one("#fleet-status").render()) == MISSING_TEXT
        assert client.fleet_reads == []
        assert app.screen is screen  # no capability screen, the run screen as it was
        await pilot.press("1")
        assert screen.query_one("#tabs").active == "tab-telemetry"  # type: ignore[attr-defined]


def test_jittering_step_times_keep_the_rows_in_place_and_a_straggler_still_moves_up() -> None:
    from ito_tui.state.fleet import fleet_view
    from ito_tui.tui.widgets.nodes_pane import steady

    first = fleet_view(fleet(8))
    shown = [row.hostname for row in first.nodes]
    # The next sample: every healthy node's step time moves by about a percent, which
    # reorders them in the view's own (slowest first) order.
    base = fleet(8)
    nodes = [
        n.model_copy(update={"step_time_s_p50": (n.step_time_s_p50 or 1.0) * (1 + 0.01 * (i % 3))})
        for i, n in enumerate(base.nodes)
    ]
    again = fleet_view(base.model_copy(update={"nodes": nodes}))
    assert [r.hostname for r in again.nodes] != shown  # what the view alone would show
    assert [r.hostname for r in steady(again.nodes, "worst", shown)] == shown
    # A node that starts to straggle moves to the top whatever was shown before.
    slow = fleet_view(fleet(8, straggler=6))
    assert steady(slow.nodes, "worst", shown)[0].hostname == host(6)
    assert steady(slow.nodes, "step", shown)[0].hostname == host(6)
    assert steady(again.nodes, "name", shown) == again.nodes
