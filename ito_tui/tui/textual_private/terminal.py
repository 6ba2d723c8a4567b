"""The terminal: sequences written to it, and the quiet driver (`textual_private`).

## The quiet driver
A Linux terminal driver whose input thread sleeps while no key arrives. Textual's
`LinuxDriver` reads the terminal in a thread that wakes every 0.1 s to see whether it should
stop and to time out a lone Escape. Ten wake-ups a second is the whole idle cost of an ito-tui
left open for days in a tmux pane (bench #3: ~0.1-0.6 % of a core, depending on the machine).
This driver blocks until the terminal has input or the driver asks the thread to stop (a byte
on a pipe it also waits on), and ticks the key parser only in the short while after input,
when an Escape may still be waiting for the key that follows it. It also stops reading a
terminal that reached end of file, where Textual's loop would spin on a descriptor that is
always readable.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import sys
import threading
import time
from codecs import getincrementaldecoder
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, TypeVar

from textual import constants
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.app import App

T = TypeVar("T")


def write_to_terminal(app: App[Any], data: str) -> None:
    """Write `data` (an OSC sequence) to the terminal `app` draws on, in order with its frames.

    Textual has no public API to send a sequence to the terminal: this writes through the
    private `App._driver`. A headless driver's `write` discards the data; before the driver
    starts there is none, and nothing is written.
    """
    driver = getattr(app, "_driver", None)
    if driver is not None:
        driver.write(data)


def with_terminal(app: T, write: Callable[[str], None]) -> T:
    """`app` (a stand-in for a running app, in tests) with a terminal that hands what
    `write_to_terminal` writes to `write`; so that no test names the private attribute."""
    setattr(app, "_driver", SimpleNamespace(write=write))  # noqa: B010  # the private name, once
    return app


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
