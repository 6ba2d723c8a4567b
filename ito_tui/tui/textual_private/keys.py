"""Keys handled in the order typed (`textual_private`).

## Keys in order
Textual's app sends each key to the widget focused when the key is read; the widget handles
it later, and key bindings (Tab's focus move, an Input's backspace) run later still, once the
key has bubbled back up to the app (Textual issue 6605). Keys that arrive in one read of the
terminal (a paste, keystrokes coalesced by a slow ssh link) were therefore all sent to the
widget focused at the start: `⇥20000` typed on a `Select` left the digits with the Select,
which dropped them, before the Tab moved the focus to the budget field; `ab⌫c` in an `Input`
left `ab`.

`KeysInOrder` holds a key while the one before it is still being handled. A key is done once
every node on its way up (the focused widget, its ancestors, the screen, the app) has handled
it, whether or not one of them stopped it: `call_later` on a node runs after the messages
already queued there, so the key is followed from node to node. A single key is sent at once,
as before; only a burst waits, key by key. If a key is still in flight `HOLD_LIMIT_S` after
the next one arrived (a handler that never returns), the held keys are sent anyway: the
keyboard is never lost.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, TypeVar

from textual import events
from textual.app import App

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.timer import Timer

ReturnType = TypeVar("ReturnType")


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
