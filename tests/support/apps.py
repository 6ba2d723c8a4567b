"""Test apps as the user gets them: `make_app` (the real CSS, bindings, header and footer)
over a fake client and a frozen clock; `settle`, which waits for a screen to be drawn, and
`settle_quiet`, which then clears the toasts for a picture.

    app = snapshot_app(client, now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=settle_quiet)

`SIZES` / `SIZE_IDS` parametrize snapshot tests with ids that read (`80x24`, `120x40`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import pytest
from pydantic import SecretStr
from textual.app import App
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.widgets import Footer, Input, Tabs

from ito_tui.config import Settings
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.screens.runs import RunsScreen
from ito_tui.tui.session import TokenCell
from ito_tui.tui.widgets.steady_footer import SteadyFooter

from .fakes import FakeClient
from .waiting import wait_for

__all__ = [
    "BACKEND_URL",
    "SIZES",
    "SIZE_IDS",
    "THEMES",
    "assert_steady_fields",
    "bottom_row_keys",
    "record_restyles",
    "settings",
    "settle",
    "settle_quiet",
    "snapshot_app",
]

BACKEND_URL = "http://127.0.0.1:8741"
SIZES = [(80, 24), (120, 40)]
SIZE_IDS = [f"{w}x{h}" for w, h in SIZES]
THEMES = ["ito-dark", "ito-light", "ito-high-contrast", "ito-ansi"]
FRAME_S = 0.2
"""A few frames: what a paint scheduled by the last repaint needs to reach the screen."""


def settings(**values: Any) -> Settings:
    """Settings with defaults and `values` only: no file, no ITO_* environment."""
    return Settings(**values, fields_set=frozenset(values))


def snapshot_app(
    client: FakeClient,
    *,
    now: datetime,
    start: str | None = None,
    theme: str = "ito-dark",
    read_only: bool = False,
) -> ItoApp:
    """The real app over `client` with the clock stopped at `now`, opened at `start` (a run
    id, "runs", a booking id, or the picker), logged in with a token the fake accepts."""
    return make_app(
        settings(backend_url=BACKEND_URL, theme=theme),
        client,
        start=start,
        read_only=read_only,
        token=TokenCell(SecretStr("s3cret")),
        clock=lambda: now,
    )


def _drawn(app: ItoApp) -> bool:
    """The connection step is over and the screen on top has what it asked for."""
    if app.session.operator is None and app.session.connection != "offline":
        return False
    for screen in app.screen_stack:
        if isinstance(screen, PipelineScreen):
            client = cast("FakeClient", app.client)
            last = client.script[-1].seq if client.script else 0
            if screen.tracker.last_seq < last or screen.repaints.pending:
                return False
    if not all(
        _underline_placed(tabs) for screen in app.screen_stack for tabs in screen.query(Tabs)
    ):
        return False
    if not all(footer.fitted for footer in app.screen.query(SteadyFooter)):
        return False  # its keys are hidden or shown after a layout
    top = app.screen
    if isinstance(top, RunsScreen):
        return top.fetches > 0
    if isinstance(top, BookingsScreen):
        return top.loaded
    return True


def _underline_placed(tabs: Tabs) -> bool:
    """Whether the tabs' underline is under the active tab: it slides there after a layout,
    and a loaded machine caught it half-way (test_pipeline_proposal_modal[120x40])."""
    active = tabs.active_tab
    if active is None or not tabs.display:
        return True
    underline = cast(Any, tabs.query_one("Underline"))  # Textual's, by type: its module is private
    start, end = active.virtual_region.shrink(active.styles.gutter).column_span
    return (underline.highlight_start, underline.highlight_end) == (start, end)


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until the app is connected, every run screen has applied its client's whole
    script with no repaint left to do (`screen.repaints.pending`), and the screen on top
    has loaded; then a few frames."""
    app = cast(ItoApp, pilot.app)
    await wait_for(pilot, lambda: _drawn(app), what="the screen to be drawn")
    await pilot.pause(FRAME_S)


async def settle_quiet(pilot: Pilot[Any]) -> None:
    """`settle`, then the toasts cleared (`App.clear_notifications`): they expire on the
    wall clock, so a loaded machine would take some down before the picture and not others.
    What an alert raises is checked by pilot tests, not pictures."""
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


def record_alerts(app: ItoApp) -> tuple[list[str | None], list[None]]:
    """The toasts' titles and the bells `app` will raise, recorded instead of shown."""
    toasts: list[str | None] = []
    bells: list[None] = []
    app.notify = lambda *a, title=None, **k: toasts.append(title)  # type: ignore[method-assign]
    app.bell = lambda: bells.append(None)  # type: ignore[method-assign]
    return toasts, bells


def record_restyles(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The nodes every app restyles whole (`App.update_styles`) from now on, in order."""
    restyled: list[object] = []
    real_update = App.update_styles

    def update_styles(self: App[Any], node: Any, animate: bool = True) -> None:
        restyled.append(node)
        real_update(self, node, animate)

    monkeypatch.setattr(App, "update_styles", update_styles)
    return restyled


def bottom_row_keys(app: App[Any]) -> list[str]:
    """The keys drawn on the bottom row of the screen on top, as `key description`: the
    footer there must be that screen's own ([] when its bottom row is no footer; a modal
    without one showed the screen under it, whose keys do nothing while it is open)."""
    screen = app.screen
    widget, _ = screen.get_widget_at(1, screen.size.height - 1)
    footers = [node for node in (widget, *widget.ancestors) if isinstance(node, Footer)]
    if not footers or footers[0].screen is not screen:
        return []
    keys = footers[0].query("FooterKey")  # Textual's footer keys, by type (its module is private)
    return [f"{cast(Any, key).key_display} {cast(Any, key).description}" for key in keys]


def assert_steady_fields(node: DOMNode) -> None:
    """`node` holds text fields, and none blinks its cursor (`SteadyInput`): a blinking one
    repaints twice a second while focused, and a picture catches it in either phase."""
    blinking = [field.id for field in node.query(Input) if field.cursor_blink]
    assert node.query(Input), f"no text field under {node!r}"
    assert blinking == [], f"these fields blink: {blinking}"
