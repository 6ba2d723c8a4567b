"""The stage list, the detail pane, the run strip and the runs list agree on step, ETA and spend.

A run on a real desk_sim (over HTTP on 127.0.0.1) is driven to its end with the real app.
At every repaint of the run (every state the operator can see) the texts the widgets
would draw are read and compared with each other and with the tracker's `Progress`.
Before issue 17 the detail pane showed the step of the last non-telemetry event
(`step 21,442` under the list's `step 23,484`), and the strip showed no step at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient
from ito_tui.format import progress_text, usd
from ito_tui.state.views import progress_of_run
from ito_tui.tui.screens.runs_table import COLUMNS, SPEND, row_of
from ito_tui.tui.widgets.spend_bar import SpendBar
from ito_tui.tui.widgets.stage_detail import StageDetail
from ito_tui.tui.widgets.stages import StageList, expanded

from .pipeline_live import drawn, live_app, shown_pipeline, start_run, wait_for
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)

SPEED = 750.0
"""A 150M run to SFT in about 12 s, with a few hundred events to repaint for: ~40 repaints
with a step on an idle machine, 8 on a loaded one at 2,000x (the app coalesces more). At
1,500x (6 s) a loaded whole-suite run once opened the app as pretrain ended: 3 repaints."""
STEP = re.compile(r"step [\d,]+(?:/[\d,]+)?(?: · ETA \w+)?")
"""`step 23,484/30,632 · ETA 3h52m` as `format.progress_text` writes it."""


@pytest.mark.long(seconds=14)
async def test_stage_list_detail_strip_and_runs_list_show_the_same_step_eta_and_spend(
    sim_factory: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory(scenario="happy", speed=SPEED)
    run_id = await start_run(sim.url, "happy", model_size="150M", post_training="sft")
    app, _client = live_app(sim.url, run_id, tmp_path)
    seen: list[dict[str, Any]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.loaded, what="the run's snapshot")
        stages, detail = screen.query_one(StageList), screen.query_one(StageDetail)
        strip_progress = screen.query_one("#run-progress")
        spend_bar = screen.query_one(SpendBar)

        def read() -> None:
            """Each widget's text for the run's step, ETA and spend, and the tracker's."""
            p = screen.tracker.progress()
            seen.append(
                {
                    "seq": screen.tracker.last_seq,
                    "want": progress_text(p) if p.step is not None else None,
                    "list": STEP.findall(drawn(stages.render(), stages.size.width)),
                    "detail": STEP.findall(drawn(detail.render(), detail.size.width)),
                    "strip": STEP.findall(str(strip_progress.render()))
                    if strip_progress.display
                    else [],
                    "spend": str(spend_bar.render()),
                    "spent": (p.usd_spent, p.budget_usd),
                    # The list shows progress under a stage that runs (or waits, paused).
                    "running": not screen.run_state.terminal
                    and any(v.name == p.stage and expanded(v) for v in stages.views),
                }
            )

        # Read in the same wake-up as the run's panels paint, right after them: what the
        # operator sees at each repaint (the scheduler paints a lane in registration order).
        screen.repaints.panel("agree", read)
        applied = screen.applied

        def applied_then_read(event: Any, changes: Any) -> None:
            applied(event, changes)
            if changes.run:
                screen.repaints.mark("agree")

        monkeypatch.setattr(screen, "applied", applied_then_read)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await wait_for(pilot, lambda: not screen.repaints.pending, 5, "the last repaint")
        read()
        async with ItoClient(sim.url, token=SecretStr("s3cret")) as client:
            run = await client.run(run_id)
            (summary,) = [r for r in await client.runs() if r.run_id == run_id]

    with_step = [s for s in seen if s["want"] is not None]
    assert len(with_step) >= 6, seen  # a bounded count: the run repainted often
    assert len({s["want"] for s in with_step}) >= 4  # ...through many steps
    for s in with_step:
        # The strip and the detail (following the current stage) say exactly the tracker's
        # words; the list says them on its running stage's row.
        assert s["strip"] == [s["want"]], s
        assert s["detail"] == [s["want"]], s
        assert s["list"] == ([s["want"]] if s["running"] else []), s
    for s in seen:
        spent, budget = s["spent"]
        if budget is not None:
            assert f"{usd(spent)}/{usd(budget)}" in s["spend"], s
    # At the end: the runs list formats the same run's snapshot to the same spend, and the
    # snapshot's progress is the stream's.
    final = screen.tracker.progress()
    assert progress_of_run(run) == final
    cells = dict(zip(COLUMNS, row_of(summary, "", ""), strict=True))
    assert cells[SPEND].plain == f"{usd(final.usd_spent)} / {usd(final.budget_usd)}"
    assert seen[-1]["strip"] == STEP.findall(progress_text(final))
