"""`SteadyFooter` rebuilds its keys when what it shows changes, and only then.

Read through public state: the footer's key widgets (a rebuild mounts new ones) and their
rendered text. The real app's footers (the run screen's "Cancel run" going at the end) are
followed in test_run_screen_live.py.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from ito_tui.tui.widgets.steady_footer import SteadyFooter
from tests.support.waiting import wait_for


class Offers(Screen[None]):
    """A screen whose "Cancel" comes and goes with `cancel_offered`."""

    BINDINGS = [Binding("x", "cancel", "Cancel"), Binding("r", "refresh", "Refresh")]

    def __init__(self) -> None:
        super().__init__()
        self.cancel_offered = True

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.cancel_offered if action == "cancel" else True

    def action_refresh(self) -> None:
        """Refresh the bindings with nothing changed, as a cursor move on the runs list does."""
        self.refresh_bindings()


def keys(app: App[Any]) -> list[Widget]:
    """The footer's key widgets (Textual's `FooterKey`, selected by its CSS type)."""
    return list(app.screen.query_one(SteadyFooter).query("FooterKey"))


def words(app: App[Any]) -> str:
    return " ".join(str(key.render()) for key in keys(app))


async def test_the_same_bindings_keep_the_keys_and_a_change_shows() -> None:
    app = OfferedApp(Offers)
    async with app.run_test(size=(80, 10)) as pilot:
        await wait_for(pilot, lambda: "Cancel" in words(app), what="the footer's keys")
        await pilot.pause(0.1)
        before = keys(app)
        for _ in range(5):
            await pilot.press("r")
        await pilot.pause(0.1)
        assert keys(app) == before  # the same widgets: nothing was rebuilt
        assert all(key.is_attached for key in before)

        screen = app.screen
        assert isinstance(screen, Offers)
        screen.cancel_offered = False
        screen.refresh_bindings()
        await wait_for(pilot, lambda: keys(app) != before, what="the footer rebuilt")
        assert "Refresh" in words(app)
        assert "Cancel" not in words(app)


class Offered(Screen[None]):
    """A body and a footer offering each of the screen's keys (their actions do nothing:
    they are there to be shown)."""

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True


class Crowded(Offered):
    """More keys than 40 columns hold."""

    BINDINGS = [
        Binding("a", "alpha", "Alpha"),
        Binding("b", "bravo", "Bravo"),
        Binding("c", "charlie", "Charlie"),
        Binding("d", "delta", "Delta"),
        Binding("e", "echo", "Echo"),
        Binding("f", "foxtrot", "Foxtrot"),
    ]


class Grouped(Offered):
    """Two grouped pairs (`←→ Move`, `+- Zoom`) and a key after them."""

    MOVE, ZOOM = Binding.Group("Move", compact=True), Binding.Group("Zoom", compact=True)
    BINDINGS = [
        Binding("left", "left", "◀", group=MOVE),
        Binding("right", "right", "▶", group=MOVE),
        Binding("plus", "zoom_in", "In", group=ZOOM),
        Binding("minus", "zoom_out", "Out", group=ZOOM),
        Binding("r", "reset", "Reset"),
    ]


class OfferedApp(App[None]):
    """An app opened on `screen`."""

    def __init__(self, screen: type[Screen[None]]) -> None:
        super().__init__()
        self.first = screen

    def on_mount(self) -> None:
        self.push_screen(self.first())


async def test_a_key_that_does_not_fit_is_hidden_whole_and_comes_back_with_room() -> None:
    app = OfferedApp(Crowded)
    async with app.run_test(size=(40, 6)) as pilot:
        footer = app.screen.query_one(SteadyFooter)
        await wait_for(pilot, lambda: len(keys(app)) == 7 and footer.fitted, what="fitted keys")
        await pilot.pause(0.1)
        palette = keys(app)[-1]
        assert palette.has_class("-command-palette") and palette.display
        own = keys(app)[:-1]
        shown = [key for key in own if key.display]
        assert 2 <= len(shown) < len(own)
        # What is shown is the screen's first keys, in order, each whole and clear of the
        # command palette's key docked at the right edge.
        assert shown == own[: len(shown)]
        for key in shown:
            assert key.region.right <= palette.region.x, (key.region, palette.region)
            assert key.region.width == key.get_content_width(app.size, app.size)

        await pilot.resize_terminal(120, 6)
        await wait_for(pilot, lambda: all(key.display for key in keys(app)), what="all keys")
        assert footer.fitted


async def test_a_groups_keys_are_shown_only_with_their_words() -> None:
    app = OfferedApp(Grouped)
    async with app.run_test(size=(60, 6)) as pilot:
        footer = app.screen.query_one(SteadyFooter)
        await wait_for(pilot, lambda: len(footer.children) == 6, what="the footer's keys")
        seen = set()
        for width in range(14, 46):
            await pilot.resize_terminal(width, 6)
            await wait_for(pilot, lambda: footer.fitted, what=f"fitted at {width} columns")
            items = list(footer.children)[:-1]  # the palette's key docked at the right
            shown = [item.display for item in items]
            # group, its words, group, its words, a key: shown as a prefix, and a group
            # never without the words after it.
            assert shown == sorted(shown, reverse=True), (width, shown)
            assert shown[0] == shown[1] and shown[2] == shown[3], (width, shown)
            seen.add(sum(shown))
        assert {0, 2, 4, 5} <= seen  # each step was seen: none, one pair, both, all
