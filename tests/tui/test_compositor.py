"""`RowCropCompositor` draws exactly what Textual's own compositor draws.

On the live pipeline screen (a real desk_sim run streaming), every partial repaint is
rendered twice from the same dirty regions: by `RowCropCompositor` and by the stock
`Compositor._get_renders`; what each would draw on the terminal must be equal.
"""

from __future__ import annotations

import re
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


_IDLE_MOVE = re.compile(r"\x1b\[\d+;\d+H(?=\x1b\[\d+;\d+H|\n|$)")


def _drawn(update: str) -> str:
    """An update without its cursor moves that draw nothing (a move straight followed by
    another move or the end of a line): Textual writes one for a widget edge exactly at
    a repainted region's right end (`x > x2` where `x >= x2` is meant), where ours has
    not rendered the widget behind. Every draw starts with an absolute move, so these
    change nothing on the screen."""
    return _IDLE_MOVE.sub("", update)


ROW_CROP_UPDATE = RowCropCompositor.render_partial_update
"""Ours, kept before the test puts `Comparison.render` in its place."""


class Comparison:
    """Renders each partial update both ways and keeps what differed."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.frames = 0
        self.cropped_rows = 0
        self.renders = {"ours": 0, "theirs": 0}
        self.differences: list[tuple[str, str]] = []

    def _counted(self, compositor: Compositor, name: str, get_renders: Any) -> None:
        def counting(crop: Any = None) -> Any:
            for item in get_renders(crop):
                self.renders[name] += 1
                yield item

        compositor._get_renders = counting  # type: ignore[method-assign]

    def render(self, compositor: RowCropCompositor) -> ChopsUpdate | None:
        regions = set(compositor._dirty_regions)
        self._counted(compositor, "ours", partial(RowCropCompositor._get_renders, compositor))
        try:
            ours = ROW_CROP_UPDATE(compositor)
        finally:
            del compositor._get_renders
        compositor._dirty_regions.update(regions)
        self._counted(compositor, "theirs", partial(Compositor._get_renders, compositor))
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
        a, b = (_drawn(u.render_segments(self.console)) for u in (ours, theirs))
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
    # ... and widgets: those behind a widget covering the repainted regions.
    assert comparison.renders["ours"] < comparison.renders["theirs"] / 2, comparison.renders
    assert not comparison.differences, comparison.differences[0]
