"""Frames a headless app composes for nobody (`textual_private`)."""

from __future__ import annotations

import functools
from typing import Any

from textual.screen import Screen

_frames = {"headless": True}
"""Whether a headless app composes its frames (`compose_headless_frames`)."""


def compose_headless_frames(compose: bool) -> None:
    """Whether a headless app (a test's pilot, a snapshot) composes each frame, as Textual
    does (the default), or only what is read of its screen, for every app in the process.

    `App._display` drops the frames a headless app composes: a third of a pilot test's CPU.
    Not composed, a frame only forgets what was dirty; what is read (`export_screenshot`)
    is composed whole when read. The suite composes them in tests/faults/ only (conftest).
    """
    _frames["headless"] = compose
    refresh = Screen._compositor_refresh
    if getattr(refresh, "_ito_wrapped", False):
        return

    @functools.wraps(refresh)
    def compositor_refresh(screen: Screen[Any]) -> None:
        if screen.app.is_headless and not _frames["headless"]:
            screen._dirty_widgets.clear()
            screen._compositor._dirty_regions.clear()
        else:
            refresh(screen)

    compositor_refresh._ito_wrapped = True  # type: ignore[attr-defined]
    Screen._compositor_refresh = compositor_refresh  # type: ignore[method-assign, assignment]
