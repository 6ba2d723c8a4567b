"""The inspector's views of a real simulated run (desk_sim over HTTP on 127.0.0.1): the
showcase's rollback drawn on the step axis (both branches, its mark at the step it
resumed from), a zoomed range fetched with `from_step`/`to_step` from `wanted_steps`,
and the run as its own reference by tokens reading no difference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ito_tui.client import ItoClient
from ito_tui.contract import TelemetrySample
from ito_tui.state import RunTracker
from ito_tui.state.inspect import (
    Reference,
    Viewport,
    inspector_view,
    points_of,
    wanted_steps,
    zoom,
)

from .test_against_sim import run_scenario, sim_client


async def whole_run(c: ItoClient, run_id: str) -> list[TelemetrySample]:
    items: list[TelemetrySample] = []
    since: int | None = None
    while True:
        page = await c.telemetry(run_id, since_seq=since)
        items += page.items
        if page.next_since_seq is None or not page.items:
            return items
        since = page.next_since_seq


async def test_the_showcase_rollback_is_drawn_and_a_zoom_fetches_its_steps(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="showcase")
    events, final = await run_scenario(sim, "showcase")
    tracker = RunTracker(final.run_id)
    for e in events:
        tracker.feed(e)
    (rewind,) = [m for m in tracker.marks() if m.kind == "rewind"]
    assert rewind.step is not None and rewind.label.startswith("rewind ")
    assert {"fault", "recovery", "checkpoint", "gate", "proposal"} <= {
        m.kind for m in tracker.marks()
    }
    async with sim_client(sim) as c:
        samples = await whole_run(c, final.run_id)
        pretrain = [s for s in samples if str(s.stage) == "pretrain"]
        points = points_of(pretrain, "loss")
        marks = [m for m in tracker.marks() if m.kind == "rewind"]
        vp = Viewport()
        view = inspector_view(points, None, marks, vp, 60, key="loss", label="loss", unit="number")
        # desk_sim samples every 251 steps: the run went back to a step between two
        # samples, so the first one after it repeats the last step before it.
        note = next(n for n in view.notes if "ran twice (rewind)" in n)
        assert note.startswith(f"steps {rewind.step:,}–")
        ((column, mark),) = view.marks
        assert mark == rewind
        # The column of the step the run resumed from holds samples of both branches.
        steps = [p.step for p in points]
        repeated = {s for s in steps if steps.count(s) > 1}
        assert repeated and min(repeated) >= rewind.step
        # Zoom onto the rewound stretch and fetch it finer, as the inspector does.
        vp = Viewport(cursor=column)
        for _ in range(3):
            vp = zoom(vp, view, 2.0)
            view = inspector_view(
                points, None, marks, vp, 60, key="loss", label="loss", unit="number"
            )
        wanted = wanted_steps(vp, view)
        assert wanted is not None and wanted[0] <= rewind.step <= wanted[1]
        page = await c.telemetry(
            final.run_id, max_points=120, from_step=wanted[0], to_step=wanted[1]
        )
        assert page.items and len(page.items) <= 120
        assert all(wanted[0] <= s.step <= wanted[1] for s in page.items)
        # The run as its own reference, by tokens: no difference anywhere.
        ref = Reference.of("self", "self", pretrain, ["loss"])
        whole = inspector_view(
            points, ref.get("loss"), (), Viewport(cursor=20), 60,
            key="loss", label="loss", unit="number", ref_label=ref.label,
        )  # fmt: skip
        assert whole.readout is not None and whole.readout.diff == pytest.approx(0.0, abs=1e-9)
