"""The run strip's step · ETA box asks for a layout of the screen only when its text
changes length (a layout lays out and repaints the whole screen: bench #4 and #5)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from ito_tui.state.views import Progress
from ito_tui.tui.widgets.run_strip import RunStrip


def at_step(step: int) -> Progress:
    return Progress(
        stage="pretrain",
        step=step,
        total_steps=30_632,
        eta_s=3_600.0,
        usd_spent=Decimal("12.50"),
        budget_usd=Decimal("30000"),
        state="running",
    )


class StripApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), "gate-failed": "red"}  # ito's themes

    def compose(self) -> ComposeResult:
        yield RunStrip(id="run-strip")


async def test_a_step_of_the_same_length_repaints_without_a_layout() -> None:
    app = StripApp()
    async with app.run_test(size=(120, 3)) as pilot:
        strip = app.query_one(RunStrip)
        strip.progress = at_step(23_484)
        await pilot.pause()
        box = app.query_one("#run-progress", Static)
        layouts: list[bool] = []
        real = box.refresh

        def refresh(*regions: Any, **kw: Any) -> Any:
            layouts.append(bool(kw.get("layout")))
            return real(*regions, **kw)

        box.refresh = refresh  # type: ignore[method-assign]
        strip.progress = at_step(23_485)  # same length: repainted in place
        await pilot.pause()
        assert layouts and not any(layouts)
        assert str(box.render()).startswith("step 23,485/30,632")
        layouts.clear()
        strip.progress = at_step(123_485)  # longer: the box must grow
        await pilot.pause()
        assert any(layouts)
        assert box.display and box.region.width == len(str(box.render()))
