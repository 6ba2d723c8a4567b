"""The run screens the app opens, imported on first use: they are not on the way to the
first frame (the booking picker's)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen


def run_screen(run_id: str, *, review_on_open: bool = True) -> Screen[None]:
    """The run's pipeline screen (`review_on_open`: its pending proposal's modal opens)."""
    from ito_tui.tui.screens.pipeline import PipelineScreen

    return PipelineScreen(run_id, review_on_open=review_on_open)


def runs_screen() -> Screen[None]:
    """The runs list."""
    from ito_tui.tui.screens.runs import RunsScreen

    return RunsScreen()


def is_runs_list(screen: object) -> bool:
    """Whether `screen` is the runs list; its module is not imported to find out (if it is
    not loaded yet, no runs list exists)."""
    module = sys.modules.get("ito_tui.tui.screens.runs")
    return module is not None and isinstance(screen, module.RunsScreen)


def shown_run(screen: object) -> str | None:
    """The run a pipeline screen shows (None for any other screen), found the same way."""
    module = sys.modules.get("ito_tui.tui.screens.pipeline")
    if module is not None and isinstance(screen, module.PipelineScreen):
        return str(screen.run_id)
    return None
