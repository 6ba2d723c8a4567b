"""What ito-tui needs of Textual that Textual has no public API for, in one module.

Written against Textual 8.2.8 (`TEXTUAL_VERSION`; pinned in pyproject.toml and
constraints.txt). tests/tui/test_textual_private.py checks that every private name used
here exists with the signature used, and the behaviour relied on, so that an upgrade that
breaks one fails there rather than silently in a terminal. Offer each upstream; drop it
once Textual has it. What is here, and what it relies on:

- `QuietLinuxDriver` (idle cost): `LinuxDriver.run_input_thread`, `.exit_event`,
  `.fileno`, `._debug`, `.process_message`; `textual._xterm_parser.XTermParser(debug)`
  with `.feed` / `.tick`; `textual._parser.ParseError`.
- `KeysInOrder` (keys in the order typed, Textual issue 6605): `App.on_event` forwarding
  a key to the focused widget (`Key.is_forwarded` set once forwarded), `call_later`
  returning False on a closing node.
- `write_to_terminal` (terminal title, desktop notifications): `App._driver.write`.
- `SharedRulesStylesheet` (CSS parsed once per process): `Stylesheet._parse_rules`,
  `.reparse`, `.copy`, `._variables`, `._invalid_css`, `._rules`, `._rules_map`, `._require_parse`.
- `preset_footer_key` (a footer rebuilt without restyling each key twice): the private
  `textual.widgets._footer.FooterKey`, its `compact` reactive (default True) and its
  watcher, which toggles the `-compact` class; `Footer.compose` binding every key but the
  command palette's (class `-command-palette`) to the footer's `compact`.

## CSS parsed once
Textual parses every CSS source (each widget class's `DEFAULT_CSS`, the app's, each
screen's) again whenever a screen with CSS of its own first opens and whenever the theme
is set: `Stylesheet.reparse` parses into a new `Stylesheet`, whose cache starts empty, and
a cache holds 64 sources where the app has ~100. `SharedRulesStylesheet` keeps parsed rules
for the process, keyed by the text, its origin, place and scope, and the theme's variables.
Measured (`tests/tui/test_pipeline_widgets.py` and `test_shell_pilot.py`, `-n 0`): CSS
parsing took 5.7 of 51 CPU s, now 0.6; 21 % less CPU in all, with the footer keys below.

## Footer keys
Textual's footer makes each key `compact` and then binds it to the footer's `compact`
(False), so a key gets and loses the `-compact` class as it mounts: two restyles.
`preset_footer_key` sets the footer's value before the key mounts (4 % of a boot's CPU).

## The quiet driver
A Linux terminal driver whose input thread sleeps while no key arrives.

Textual's `LinuxDriver` reads the terminal in a thread that wakes every 0.1 s to
see whether it should stop and to time out a lone Escape. Ten wake-ups a second
is the whole idle cost of an ito-tui left open for days in a tmux pane (bench #3:
~0.1-0.6 % of a core, depending on the machine). This driver blocks until the
terminal has input or the driver asks the thread to stop (a byte on a pipe it
also waits on), and ticks the key parser only in the short while after input,
when an Escape may still be waiting for the key that follows it.

It also stops reading a terminal that reached end of file, where Textual's loop
would spin on a descriptor that is always readable.

## Keys in order
Textual's app sends each key to the widget focused when the key is read; the widget
handles it later, and key bindings (Tab's focus move, an Input's backspace) run later
still, once the key has bubbled back up to the app (Textual issue 6605). Keys that
arrive in one read of the terminal (a paste, keystrokes coalesced by a slow ssh link)
were therefore all sent to the widget focused at the start: `⇥20000` typed on a
`Select` left the digits with the Select, which dropped them, before the Tab moved
the focus to the budget field; `ab⌫c` in an `Input` left `ab`.

`KeysInOrder` holds a key while the one before it is still being handled. A key is
done once every node on its way up (the focused widget, its ancestors, the screen,
the app) has handled it, whether or not one of them stopped it: `call_later` on a
node runs after the messages already queued there, so the key is followed from node
to node. A single key is sent at once, as before; only a burst waits, key by key.
If a key is still in flight `HOLD_LIMIT_S` after the next one arrived (a handler
that never returns), the held keys are sent anyway: the keyboard is never lost.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import sys
import threading
import time
from codecs import getincrementaldecoder
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from textual import constants, events
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.css.model import RuleSet
    from textual.css.types import CSSLocation
    from textual.dom import DOMNode
    from textual.timer import Timer
    from textual.widget import Widget

TEXTUAL_VERSION = "8.2.8"
"""The Textual this module was written against (and tested with)."""

ReturnType = TypeVar("ReturnType")
T = TypeVar("T")


# ------------------------------------------------------------ the terminal


def write_to_terminal(app: App[Any], data: str) -> None:
    """Write `data` (an OSC sequence) to the terminal `app` draws on, in order with its frames.

    Textual has no public API to send a sequence to the terminal: this writes through the
    private `App._driver`. A headless driver's `write` discards the data; before the driver
    starts there is none, and nothing is written.
    """
    driver = getattr(app, "_driver", None)
    if driver is not None:
        driver.write(data)


class _TerminalStub:
    """Stands in for a driver: what is written goes to `write`."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write


def with_terminal(app: T, write: Callable[[str], None]) -> T:
    """`app` (a stand-in for a running app, in tests) with a terminal that hands what
    `write_to_terminal` writes to `write`; so that no test names the private attribute."""
    setattr(app, "_driver", _TerminalStub(write))  # noqa: B010  # the private name, once
    return app


# ------------------------------------------------------------ CSS parsed once

PARSED_LIMIT = 1024
"""Most parsed sources kept: an app has ~100 per theme, and a process a few themes."""

_parsed: dict[tuple[object, ...], list[RuleSet]] = {}
"""Parsed rules by (css, read_from, is_default_rules, tie_breaker, scope, variables),
oldest first; shared by every `SharedRulesStylesheet` in the process."""


class SharedRulesStylesheet(Stylesheet):
    """A `Stylesheet` whose parsed rules are kept for the process (module docstring).

    Rules are never changed once parsed (Textual's own cache hands the same ones out
    again), so stylesheets may share them.
    """

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self._variables_key = _frozen(variables)

    def set_variables(self, variables: dict[str, str]) -> None:
        super().set_variables(variables)
        self._variables_key = _frozen(variables)

    def _parse_rules(
        self,
        css: str,
        read_from: CSSLocation,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        key = (css, read_from, is_default_rules, tie_breaker, scope, self._variables_key)
        rules = _parsed.pop(key, None)
        if rules is None:
            # A source that does not parse raises here and is kept by nobody.
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            if len(_parsed) >= PARSED_LIMIT:
                del _parsed[next(iter(_parsed))]
        _parsed[key] = rules
        return rules

    def copy(self) -> SharedRulesStylesheet:
        stylesheet = SharedRulesStylesheet(variables=dict(self._variables))
        stylesheet.source = self.source.copy()
        return stylesheet

    def reparse(self) -> None:
        # Textual's `reparse`, with a stylesheet of this class as the fresh one (Textual's
        # makes a plain `Stylesheet`, which parses everything again).
        fresh = self.copy()
        try:
            fresh.parse()
        except Exception:
            self._invalid_css.update(fresh._invalid_css)
            raise
        self._rules = fresh.rules
        self._rules_map = None
        self.source = fresh.source
        self._require_parse = False


def _frozen(variables: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((variables or {}).items()))


def share_parsed_css(app: App[Any]) -> None:
    """Give `app` (before it runs) a stylesheet that shares parsed rules (module docstring)."""
    app.stylesheet = SharedRulesStylesheet(variables=app.get_css_variables())


def preset_footer_key(widget: Widget, compact: bool) -> None:
    """Give `widget`, if it is a footer key not yet mounted, its footer's `compact` (module
    docstring); any other widget is left as it is. The command palette's key is not bound
    to the footer's `compact` and keeps its own (True: Textual draws it compact)."""
    if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
        widget.set_reactive(FooterKey.compact, compact)
        widget.set_class(compact, "-compact", update=False)


# ------------------------------------------------------------ the quiet driver

TICK_S = 0.1
"""How often the key parser is ticked while it may hold a partial sequence."""
SETTLE_S = constants.ESCAPE_DELAY + 3 * TICK_S
"""How long after the last input the parser is still ticked."""


if sys.platform != "win32":  # no termios there: Textual's Windows driver is kept
    from textual.drivers.linux_driver import LinuxDriver

    class _WakingEvent(threading.Event):
        """An `Event` that also writes a byte to a pipe when set, and drains it when cleared."""

        def __init__(self, wake_r: int, wake_w: int) -> None:
            super().__init__()
            self._wake_r = wake_r
            self._wake_w = wake_w

        def set(self) -> None:
            super().set()
            # A full pipe is already readable; a closed one has nobody waiting on it.
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"\0")

        def clear(self) -> None:
            super().clear()
            with contextlib.suppress(OSError):  # BlockingIOError once it is empty
                while os.read(self._wake_r, 512):
                    pass

    class QuietLinuxDriver(LinuxDriver):
        """`LinuxDriver` with an input thread that blocks instead of polling."""

        def __init__(self, app: App[Any], **kwargs: Any) -> None:
            super().__init__(app, **kwargs)
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            self._pipe_open = True
            self.exit_event = _WakingEvent(self._wake_r, self._wake_w)

        def close(self) -> None:
            super().close()
            if self._pipe_open:  # close once: a second close could hit a reused descriptor
                self._pipe_open = False
                os.close(self._wake_r)
                os.close(self._wake_w)

        def run_input_thread(self) -> None:
            """Read the terminal and dispatch key, mouse and terminal events until told to stop."""
            fileno = self.fileno
            parser = XTermParser(self._debug)
            decode = getincrementaldecoder("utf-8")().decode
            selector = selectors.SelectSelector()
            selector.register(fileno, selectors.EVENT_READ, "input")
            selector.register(self._wake_r, selectors.EVENT_READ, "wake")
            reading = True
            last_input = float("-inf")

            def dispatch(data: str) -> None:
                for event in parser.feed(data):
                    self.process_message(event)

            try:
                while not self.exit_event.is_set():
                    recent = time.monotonic() - last_input < SETTLE_S
                    for key, _mask in selector.select(TICK_S if recent else None):
                        if key.data != "input":
                            continue  # woken to stop: the loop condition sees it
                        data = os.read(fileno, 4096)
                        if not data:
                            # End of file: the terminal is gone or stdin is not one. Stop
                            # watching it rather than spin on a descriptor always readable.
                            selector.unregister(fileno)
                            reading = False
                            continue
                        last_input = time.monotonic()
                        dispatch(decode(data))
                    for event in parser.tick():
                        self.process_message(event)
                if reading:
                    # What was typed while stopping, as Textual's own loop does.
                    selector.unregister(self._wake_r)
                    for _key, _mask in selector.select(TICK_S):
                        dispatch(decode(os.read(fileno, 4096), final=True))
                    for event in parser.tick():
                        self.process_message(event)
            finally:
                selector.close()
                try:
                    for _event in parser.feed(""):
                        pass
                except (EOFError, ParseError):
                    pass


# ------------------------------------------------------------ keys in order

HOLD_LIMIT_S = 5.0
"""Longest a key is held behind one still in flight. Well past a stall of a working
handler on a loaded machine: at 1 s a whole-suite run on 2 cores gave up on a key still
being handled, sent the next ones to the field it was leaving and typed them there."""


class KeysInOrder(App[ReturnType]):
    """An App whose keys are handled strictly one after the other (see module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key_in_flight: events.Key | None = None
        self._held_keys: deque[events.Key] = deque()
        self._hold_timer: Timer | None = None

    @property
    def keys_waiting(self) -> bool:
        """Whether a key is in flight, held, or timed: False once the keyboard is idle."""
        return (
            self._key_in_flight is not None or bool(self._held_keys) or self._hold_timer is not None
        )

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self._key_in_flight is None:
                await self._send(event)
            else:
                self._held_keys.append(event)
                if self._hold_timer is None:
                    self._arm()
            return
        await super().on_event(event)

    async def _send(self, key: events.Key) -> None:
        """Send `key`, and the held keys after it for as long as none is forwarded."""
        while True:
            self._key_in_flight = key
            # Priority bindings run here; otherwise the key is posted to the focused widget.
            await super().on_event(key)
            if key.is_forwarded:
                self._follow(key, self.focused or self.screen)
                self._arm()
                return
            self._key_in_flight = None
            if not self._held_keys:
                self._arm()
                return
            key = self._held_keys.popleft()

    def _follow(self, key: events.Key, node: DOMNode) -> None:
        """Once `node` has handled `key`, follow it to the node above (the app: done)."""

        async def handled() -> None:
            parent = node.parent
            if parent is None:
                await self._done(key)
            else:
                self._follow(key, parent)

        if not node.call_later(handled):  # a node closing: nothing more will handle it
            self.call_later(self._done, key)

    async def _done(self, key: events.Key) -> None:
        if key is not self._key_in_flight:
            return  # given up on (see _give_up)
        self._key_in_flight = None
        if self._held_keys:
            await self._send(self._held_keys.popleft())
        else:
            self._arm()

    def _arm(self) -> None:
        """Time the key in flight while others wait behind it; no timer otherwise."""
        if self._hold_timer is not None:
            self._hold_timer.stop()
            self._hold_timer = None
        if self._held_keys and self._key_in_flight is not None:
            self._hold_timer = self.set_timer(HOLD_LIMIT_S, self._give_up)

    async def _give_up(self) -> None:
        self._hold_timer = None
        if self._key_in_flight is not None:
            await self._done(self._key_in_flight)
