"""`RowCropCompositor` writes exactly what Textual's own compositor writes.

On the live pipeline screen (a real desk_sim run streaming), every partial repaint is
rendered twice from the same dirty regions: by `RowCropCompositor` and by the stock
`Compositor._get_renders`; the bytes each would send to the terminal must be equal.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual._compositor import ChopsUpdate, Compositor

from ito_tui.tui.compositor import RowCropCompositor

from .pipeline_live import has_pipeline, live_app, pipeline_of, start_run, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("ITO_CONFIG_FILE", str(config))


class Comparison:
    """Renders each partial update both ways and keeps what differed."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.frames = 0
        self.cropped_rows = 0
        self.differences: list[tuple[str, str]] = []

    def render(self, compositor: RowCropCompositor) -> ChopsUpdate | None:
        regions = set(compositor._dirty_regions)
        ours = Compositor.render_partial_update(compositor)  # with our _get_renders
        compositor._dirty_regions.update(regions)
        stock = partial(Compositor._get_renders, compositor)
        compositor._get_renders = stock  # type: ignore[method-assign]
        try:
            theirs = Compositor.render_partial_update(compositor)
        finally:
            del compositor._get_renders
        if ours is None or theirs is None:
            assert ours is theirs
            return ours
        self.frames += 1
        height = compositor.size.height
        self.cropped_rows += height - len({y for y, _x1, _x2 in ours.spans})
        a, b = ours.render_segments(self.console), theirs.render_segments(self.console)
        if a != b:
            self.differences.append((a, b))
        return ours


async def test_partial_repaints_match_textuals_compositor(
    sim_factory: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory(scenario="happy", speed=30_000.0)
    run_id = await start_run(sim.url, "happy")
    app, _client = live_app(sim.url, run_id, tmp_path)
    async with app.run_test(size=(110, 32)) as pilot:
        comparison = Comparison(app.console)
        monkeypatch.setattr(
            RowCropCompositor, "render_partial_update", lambda self: comparison.render(self)
        )
        await wait_for(pilot, lambda: has_pipeline(app), what="pipeline screen")
        screen = pipeline_of(app)
        await wait_for(pilot, lambda: comparison.frames >= 20, 60, "20 partial repaints")
        # The other tabs and the stage list's cursor repaint other widgets.
        for key in ("2", "down", "down", "3", "up", "1"):
            await pilot.press(key)
            await pilot.pause(0.2)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await pilot.pause(0.3)
    assert comparison.frames >= 30, comparison.frames
    assert comparison.cropped_rows > 0  # repaints did leave rows out
    assert not comparison.differences, comparison.differences[0]
