"""`KeysInOrder` on a small app of its own: keys handled one after the other, and never
held for good behind a handler that does not return."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget

from ito_tui.tui.textual_private import HOLD_LIMIT_S, KeysInOrder


async def until(predicate: Callable[[], bool], within: float = 10.0) -> None:
    """Poll without waiting for the app to be idle (a handler here never is, on purpose)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


class Recorder(Widget, can_focus=True):
    """Records each key it handles; `h` waits on `release` first, `t` is bound to Tab."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("t", "app.focus_next")]

    def __init__(self, name: str, handled: list[str], release: asyncio.Event) -> None:
        super().__init__(id=name)
        self.handled = handled
        self.release = release

    async def on_key(self, event: events.Key) -> None:
        if event.key == "h":
            await self.release.wait()
        if event.is_printable and event.key != "t":
            self.handled.append(f"{self.id}:{event.key}")
            event.stop()


class Two(KeysInOrder[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("z", "mark", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.handled: list[str] = []
        self.release = asyncio.Event()

    def compose(self) -> ComposeResult:
        yield Recorder("a", self.handled, self.release)
        yield Recorder("b", self.handled, self.release)

    def action_mark(self) -> None:
        self.handled.append("app:z")


async def test_a_key_bound_on_the_way_up_acts_before_the_keys_behind_it_are_sent() -> None:
    app = Two()
    async with app.run_test() as pilot:
        app.query_one("#a").focus()
        await pilot.pause()
        for key in "xtyzw":  # `t` moves the focus once it has bubbled up to the app
            app.post_message(events.Key(key, key))
        await until(lambda: len(app.handled) == 4)
        assert app.handled == ["a:x", "b:y", "app:z", "b:w"]


async def test_keys_behind_a_handler_that_does_not_return_are_sent_after_the_hold_limit() -> None:
    app = Two()
    async with app.run_test() as pilot:
        app.query_one("#a").focus()
        await pilot.pause()
        for key in "hz":  # `z` is the app's own (priority) binding: it needs no widget
            app.post_message(events.Key(key, key))
        await until(lambda: app.handled == ["app:z"], within=HOLD_LIMIT_S + 10)
        app.release.set()
        await until(lambda: len(app.handled) == 2)
        assert app.handled == ["app:z", "a:h"]
        assert not app.keys_waiting  # nothing left in flight, held or timed


async def test_a_handler_as_slow_as_a_loaded_machine_keeps_the_keys_after_it_in_order() -> None:
    """A handler that takes 3 s (a head node under load) is not given up on: the keys
    behind it wait, so the Tab among them moves the focus before the next key is sent."""
    app = Two()
    async with app.run_test() as pilot:
        app.query_one("#a").focus()
        await pilot.pause()
        for key in "hty":
            app.post_message(events.Key(key, key))
        await asyncio.sleep(3.0)
        app.release.set()
        await until(lambda: len(app.handled) == 2)
        assert app.handled == ["a:h", "b:y"]
        assert not app.keys_waiting
