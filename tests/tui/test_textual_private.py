"""What `ito_tui/tui/textual_private/` relies on in Textual is still there and still works.

Each test names what would break silently on an upgrade: the quiet driver would stop
reading keys (or poll again), a burst of keys would be sent out of order, the terminal
title and desktop notifications would stop. They are the only tests that name Textual's
private attributes; every other test goes through `textual_private`'s public helpers.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App
from textual.drivers.headless_driver import HeadlessDriver
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.widgets import Static

from ito_tui.tui import textual_private
from ito_tui.tui.textual_private import (
    TEXTUAL_VERSION,
    KeysInOrder,
    QuietLinuxDriver,
    SharedRulesStylesheet,
    compose_headless_frames,
    styles,
    with_terminal,
    write_to_terminal,
)
from tests.support.apps import record_restyles

ROOT = Path(__file__).resolve().parents[2]

REPLACED = {
    # QuietLinuxDriver.run_input_thread replaces this one whole: a change in it (a new
    # sequence handled, a fix) is one the quiet driver does not have. Read it, port it,
    # then record the new digest.
    "textual.drivers.linux_driver.LinuxDriver.run_input_thread": "d796af6d69db337d",
    # KeysInOrder wraps this one: it relies on priority bindings running in it and on the
    # key being forwarded to the focused widget from it (`Key.is_forwarded`).
    "textual.app.App.on_event": "3dbf14d694916fe3",
    # SharedRulesStylesheet replaces these two (a fresh stylesheet of its own class) and
    # wraps the third (its cache first).
    "textual.css.stylesheet.Stylesheet.reparse": "dd193eb05f8baeb5",
    "textual.css.stylesheet.Stylesheet.copy": "5364e49bbbdce0ca",
    "textual.css.stylesheet.Stylesheet._parse_rules": "2f1c2d220b672d1b",
    # preset_footer_key sets before mounting what this watcher and the data binding in
    # this compose would set: the keys but the palette's bound to the footer's `compact`.
    "textual.widgets._footer.FooterKey._watch_compact": "d2fa36af728768bb",
    "textual.widgets._footer.Footer.compose": "8514ae6622cb1844",
    # compose_headless_frames wraps this one: it relies on it doing nothing for a headless
    # app but compose a frame for `App._display` to drop, and forget what was dirty.
    "textual.screen.Screen._compositor_refresh": "7a40efe563816a06",
}


def _digest(qualified: str) -> str:
    module_name, owner_name, function_name = qualified.rsplit(".", 2)
    owner = getattr(importlib.import_module(module_name), owner_name)
    source = inspect.getsource(getattr(owner, function_name))
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def test_the_module_names_the_textual_it_is_pinned_to() -> None:
    # A bump of the pin must come with a look at this module (and this constant).
    pins = {
        path: re.search(r"textual==([0-9.]+)", (ROOT / path).read_text())
        for path in ("constraints.txt", "pyproject.toml")
    }
    assert {path: m.group(1) if m else None for path, m in pins.items()} == {
        "constraints.txt": TEXTUAL_VERSION,
        "pyproject.toml": TEXTUAL_VERSION,
    }
    assert f"Textual {TEXTUAL_VERSION}" in (textual_private.__doc__ or "")


@pytest.mark.parametrize("qualified", sorted(REPLACED))
def test_what_it_replaces_or_wraps_is_the_code_it_was_written_against(qualified: str) -> None:
    assert _digest(qualified) == REPLACED[qualified], f"{qualified} changed in Textual"


def test_the_private_names_it_uses_exist_with_the_signatures_used() -> None:
    from textual._parser import ParseError
    from textual._xterm_parser import XTermParser
    from textual.drivers.linux_driver import LinuxDriver

    assert issubclass(ParseError, Exception)
    assert list(inspect.signature(XTermParser).parameters) == ["debug"]
    parser = XTermParser(False)
    assert callable(parser.feed) and callable(parser.tick)
    assert list(inspect.signature(LinuxDriver).parameters) == ["app", "debug", "mouse", "size"]
    assert callable(LinuxDriver.process_message)
    assert isinstance(events.Key("a", "a").is_forwarded, bool)
    assert inspect.signature(MessagePump.call_later).return_annotation in (bool, "bool")
    assert KeysInOrder.on_event is not App.on_event
    sheet = SharedRulesStylesheet()
    for name in ("_variables", "_invalid_css", "_rules", "_rules_map", "_require_parse"):
        assert hasattr(sheet, name), name
    screen: Screen[None] = Screen()
    assert isinstance(screen._dirty_widgets, set)
    assert isinstance(screen._compositor._dirty_regions, set)


async def test_write_to_terminal_reaches_the_driver_of_a_running_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `App._driver` renamed, or its `write` gone, would silently drop every terminal
    # title and desktop notification.
    written: list[str] = []
    real_write = HeadlessDriver.write

    def write(self: HeadlessDriver, data: str) -> None:
        written.append(data)
        real_write(self, data)

    monkeypatch.setattr(HeadlessDriver, "write", write)
    app: App[None] = App()
    write_to_terminal(app, "\x1b]2;before the driver starts\x07")  # no driver yet: dropped
    async with app.run_test():
        write_to_terminal(app, "\x1b]9;ito: test\x07")
    assert "\x1b]9;ito: test\x07" in written
    assert not any("before the driver" in w for w in written)


def test_a_stand_in_app_gets_a_terminal_through_the_public_helper() -> None:
    written: list[str] = []

    class StandIn:
        pass

    app: Any = with_terminal(StandIn(), written.append)
    write_to_terminal(app, "\x1b]2;ito\x07")
    assert written == ["\x1b]2;ito\x07"]


@pytest.mark.skipif(sys.platform == "win32", reason="a Linux terminal driver")
async def test_the_quiet_driver_reads_keys_and_stops_when_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its input thread on a pipe standing in for the terminal (async: a driver is made in
    # a running loop): a key written arrives as a Key event; setting the exit event wakes
    # the thread (it blocks without a timeout while no key arrives) and it ends.
    read_fd, write_fd = os.pipe()
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTSTP, signal.SIGCONT)}
    stdin = os.fdopen(os.dup(read_fd), "r")
    monkeypatch.setattr(sys, "__stdin__", stdin)
    try:
        driver = QuietLinuxDriver(App(), mouse=False, size=(80, 24))
        got: list[object] = []
        arrived = threading.Event()

        def collect(message: object) -> None:
            got.append(message)
            arrived.set()

        monkeypatch.setattr(driver, "process_message", collect)
        thread = threading.Thread(target=driver.run_input_thread, daemon=True)
        thread.start()
        os.write(write_fd, b"x")
        assert arrived.wait(5), "no event from the input thread"
        # Past the settling ticks after that key, the thread waits without a timeout: only
        # the exit event's byte on the wake pipe can end that wait.
        await asyncio.sleep(textual_private.SETTLE_S + 0.3)
        driver.exit_event.set()
        thread.join(5)
        assert not thread.is_alive(), "the input thread did not stop when told"
        keys = [m for m in got if isinstance(m, events.Key)]
        assert [k.key for k in keys] == ["x"]
        driver.close()
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        stdin.close()
        os.close(read_fd)
        os.close(write_fd)


# ------------------------------------------------------------ CSS parsed once


def _sheet(css: str, variables: dict[str, str] | None = None) -> SharedRulesStylesheet:
    sheet = SharedRulesStylesheet(variables=variables)
    sheet.add_source(css, read_from=("test", "css"))
    sheet.parse()
    return sheet


def _parsed_by_textual(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CSS texts Textual's own parser is asked to parse from now on."""
    from textual.css import stylesheet

    asked: list[str] = []
    real_parse = stylesheet.parse

    def parse(scope: str, css: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(css)
        return real_parse(scope, css, *args, **kwargs)

    monkeypatch.setattr(stylesheet, "parse", parse)
    return asked


def test_css_is_parsed_once_per_process_and_again_for_new_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _parsed_by_textual(monkeypatch)
    css = f"Label.t{os.getpid()}x {{ color: $shade; }}"
    first = _sheet(css, {"shade": "red"})
    second = _sheet(css, {"shade": "red"})
    # Textual's reparse parses into a fresh stylesheet: the shared rules survive that too.
    second.reparse()
    assert asked == [css]
    assert second.rules == first.rules and second.rules[0] is first.rules[0]
    # Other variables are other rules: a theme change is parsed and applied.
    second.set_variables({"shade": "blue"})
    second.reparse()
    assert asked == [css, css]
    colours = [sheet.rules[0].styles.color for sheet in (first, second)]
    assert [c.hex if c else None for c in colours] == ["#FF0000", "#0000FF"]


def test_css_with_errors_is_refused_by_every_stylesheet_that_shares_it() -> None:
    # Rules with errors are shared like any (as Textual's own cache keeps them); each
    # stylesheet still refuses them, with the error, and a bad token is kept by nobody.
    from textual.css.stylesheet import StylesheetParseError
    from textual.css.tokenizer import TokenError

    declaration = f"Label.t{os.getpid()}y {{ colour: red; }}"
    for _ in range(2):
        with pytest.raises(StylesheetParseError) as refused:
            _sheet(declaration)
        assert "colour" in str(refused.value.errors.rules[0].errors)
    token = f"Label.t{os.getpid()}z {{ color: red; "
    for _ in range(2):
        with pytest.raises(TokenError):
            _sheet(token)
    assert not [key for key in styles._parsed if key[0] == token]


def test_the_shared_rules_are_bounded_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(styles, "PARSED_LIMIT", 3)
    monkeypatch.setattr(styles, "_parsed", {})
    asked = _parsed_by_textual(monkeypatch)
    sources = [f"Label.t{n} {{ color: red; }}" for n in range(4)]
    for css in sources:
        _sheet(css)
    _sheet(sources[3])
    _sheet(sources[0])  # the oldest, let go when the fourth came
    assert len(styles._parsed) == 3
    assert asked == [*sources, sources[0]]


async def test_the_app_shares_parsed_css_and_a_theme_change_still_restyles() -> None:
    from textual.widgets import Label

    from ito_tui.tui.theming import ThemedApp

    class Themed(ThemedApp[None]):
        CSS = "Label { background: $primary; }"

        def compose(self) -> Any:
            yield Label("x")

    app = Themed("ito-dark")
    assert isinstance(app.stylesheet, SharedRulesStylesheet)
    async with app.run_test() as pilot:
        label = app.query_one(Label)
        dark = label.styles.background
        app.theme = "ito-light"
        await pilot.pause(0.1)
        assert isinstance(app.stylesheet, SharedRulesStylesheet)
        assert label.styles.background != dark
        assert label.styles.background == app.current_theme.to_color_system().primary


# ------------------------------------------------------------ frames nobody sees


class Counted(Static):
    """A Static that counts how often it is drawn."""

    drawn = 0

    def render(self) -> Any:
        self.drawn += 1
        return super().render()


@pytest.mark.parametrize("compose", [True, False])
async def test_a_headless_app_composes_its_frames_only_when_asked_and_reads_the_same(
    compose: bool,
) -> None:
    compose_headless_frames(compose)
    counted = Counted("one")

    class One(App[None]):
        CSS = "Counted { width: 10; height: 1; }"  # no layout asks it for its size

        def compose(self) -> Any:
            yield counted

    app = One()
    async with app.run_test() as pilot:
        await pilot.pause()
        drawn = counted.drawn
        counted.update("two")
        await pilot.pause()
        await pilot.pause()
        assert (counted.drawn > drawn) is compose  # a frame composed draws the widget
        assert "two" in app.export_screenshot()  # a read composes it either way
        assert counted.drawn > drawn


# ------------------------------------------------------------ footer keys


@pytest.mark.parametrize("compact", [False, True])
async def test_footer_keys_mount_with_the_footers_compact_and_are_not_restyled(
    monkeypatch: pytest.MonkeyPatch, compact: bool
) -> None:
    from textual.widgets._footer import FooterKey

    from ito_tui.tui.widgets.steady_footer import SteadyFooter

    restyled = record_restyles(monkeypatch)

    class Keys(App[None]):
        BINDINGS = [("q", "quit", "Quit"), ("h", "help", "Help")]

        def compose(self) -> Any:
            yield SteadyFooter(compact=compact)

    app = Keys()
    async with app.run_test() as pilot:
        await pilot.pause(0.1)
        keys = {key.key: key for key in app.query(FooterKey)}
        assert sorted(keys) == ["ctrl+p", "h", "q"]
        for name in ("q", "h"):
            assert keys[name].compact is compact
            assert keys[name].has_class("-compact") is compact
        # The palette's key is Textual's compact one either way.
        assert keys["ctrl+p"].compact and keys["ctrl+p"].has_class("-compact")
        assert not [node for node in restyled if node in (keys["q"], keys["h"])]
