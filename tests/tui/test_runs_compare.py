"""The runs list's marks: `space` marks a run (two at most, `#1`/`#2` in its row), `c`
opens run #1 with run #2 drawn on its charts, `v` their spec diff."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.screens.spec_diff import SpecDiffScreen
from tests.support.apps import settle, snapshot_app
from tests.support.waiting import wait_for

from .compare_fakes import REF_ID, CompareClient
from .pipeline_fakes import NOW, RUN_ID, pretrain_script
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)


def run_cells(screen: RunsScreen) -> list[str]:
    table = screen.query_one(DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


def caption(screen: RunsScreen) -> str:
    """The caption under the runs table, as drawn."""
    return str(screen.query_one("#runs-caption", Static).render())


async def test_two_marked_runs_are_compared_and_diffed() -> None:
    client = CompareClient(script=pretrain_script().events)
    app = snapshot_app(client, now=NOW, start="runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        assert runs.selected_run_id() == RUN_ID  # active first
        assert not runs.check_action("compare", ()) and not runs.check_action("spec_diff", ())
        await pilot.press("space")
        assert run_cells(runs)[0] == f"#1 {RUN_ID}"
        assert "space marks one more" in caption(runs)
        assert not runs.check_action("compare", ())
        await pilot.press("down", "space")
        assert run_cells(runs)[:2] == [f"#1 {RUN_ID}", f"#2 {REF_ID}"]
        assert f"marked #1 {RUN_ID}, #2 {REF_ID} (c compares, v spec diff)" in caption(runs)
        # v: the two side by side.
        await pilot.press("v")
        diff = app.screen
        assert isinstance(diff, SpecDiffScreen) and (diff.a_id, diff.b_id) == (RUN_ID, REF_ID)
        await wait_for(pilot, lambda: diff.loaded, what="the spec diff")
        assert any(r.differs for r in diff.rows)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is runs, what="the list again")
        # c: run #1's screen, run #2 drawn on its charts.
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, PipelineScreen), what="the run")
        screen = app.screen
        assert isinstance(screen, PipelineScreen) and screen.run_id == RUN_ID
        assert screen.compare.run_id == REF_ID
        await wait_for(pilot, lambda: screen.reference is not None, what="the reference")
        assert client.reference_reads[0][0] == REF_ID


async def test_a_third_mark_lets_the_oldest_go_and_space_again_unmarks() -> None:
    client = CompareClient(script=pretrain_script().events)
    app = snapshot_app(client, now=NOW, start="runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        ids = [r.split()[-1] for r in run_cells(runs)]
        await pilot.press("space", "down", "space", "down", "space")
        assert runs.marked == (ids[1], ids[2])
        assert [c.split()[0] for c in run_cells(runs)] == [ids[0], "#1", "#2"]
        await pilot.press("space")  # on #2 again: unmarked
        assert runs.marked == (ids[1],)
        assert run_cells(runs)[2] == ids[2]
        assert not runs.check_action("compare", ())
