"""`StyledOnFirstShow`: a screen's first showing is not restyled whole (its widgets were
styled as they mounted) and draws as styled; a later showing is restyled as Textual does;
every screen of the app has it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.screen import Screen
from textual.widgets import Static

import ito_tui.tui
from ito_tui.tui.first_show import StyledOnFirstShow
from tests.support.apps import record_restyles


class Shown(StyledOnFirstShow, Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("body", id="body")


class Styled(App[None]):
    CSS = """
    #body { background: #ff0000; }
    App.-late #body { color: #00ff00; }
    """


async def test_a_first_showing_is_not_restyled_draws_styled_and_a_later_one_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    restyled = record_restyles(monkeypatch)
    app = Styled()
    async with app.run_test() as pilot:
        app.add_class("-late")  # before the screen exists: its widgets mount with it
        screen = Shown()
        await app.push_screen(screen)
        await pilot.pause(0.1)
        body = screen.query_one("#body", Static)
        assert body.styles.background == Color.parse("#ff0000")
        assert body.styles.color == Color.parse("#00ff00")
        assert screen not in restyled
        # Shown again (pushed once more, as a mode's screen is when switched back to):
        # Textual's restyle is kept. (Uncovered by a popped screen, Textual restyles none.)
        app.pop_screen()
        await pilot.pause(0.1)
        await app.push_screen(screen)
        await pilot.pause(0.1)
        assert screen in restyled


def _screens() -> list[type[Screen[Any]]]:
    found: dict[str, type[Screen[Any]]] = {}
    for info in pkgutil.walk_packages(ito_tui.tui.__path__, "ito_tui.tui."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__.startswith("ito_tui."):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def test_every_screen_the_app_shows_is_styled_on_first_show() -> None:
    screens = _screens()
    # A class only other screens build on (the run screen's parts) is never shown itself.
    shown = [s for s in screens if not any(o is not s and issubclass(o, s) for o in screens)]
    assert len(shown) >= 15
    assert [s.__qualname__ for s in shown if not issubclass(s, StyledOnFirstShow)] == []
