"""`OrderedInput`: an `Input` that takes a burst of keys in the order they were typed.

Keys that arrive in one read of the terminal (a paste, keystrokes coalesced by a slow
ssh link) are all sent by the app to the widget focused at that moment, before any of
them is handled. Textual inserts a printable character when the `Input` handles its
key, but runs key bindings (the `Input`'s own: backspace, arrows, ctrl+u, enter; the
screen's Tab) only once the key has bubbled back up to the app, behind the keys that
followed it (Textual issue 6605). So `ab⌫c` left `ab`, and in `1B⇥hf` the `hf` was
typed into the field the Tab left.

`OrderedInput` handles each key when it reaches it, as the app would have:

- its own bindings run at once (the app asks the focused widget first too);
- a key bound to moving the focus (Tab, shift+Tab) moves it at once;
- a key that reaches it after the focus has moved on is passed to the widget focused
  now, in order, instead of being typed here.

Every other key bubbles as before. What it cannot mend: a burst that runs on past a
widget that is not an `OrderedInput` (a `Select` in the spec form) still loses the keys
sent on to that widget before its bubbled Tab moves the focus. Making Tab an app
priority binding mends that but moves the focus ahead of keys before it that a widget
handles by binding (an arrow then Tab on the booking table: the arrow went to the next
widget); the general fix is the app handling one key at a time.

It reads `Screen._modal_binding_chain` and `Widget._forward_event`, private to Textual
8.2.8 (pinned); tests/tui/test_shell_keys.py types bursts into it.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

FOCUS_ACTIONS = frozenset({"app.focus_next", "app.focus_previous", "focus_next", "focus_previous"})
"""Actions that move the focus (the screen's Tab and shift+Tab bindings)."""


class OrderedInput(Input):
    """`Input` that takes a burst of keys in typing order (see module docstring)."""

    async def _on_key(self, event: events.Key) -> None:
        focused = self.screen.focused
        if focused is not None and focused is not self:
            # Sent to us before an earlier key of the burst moved the focus on.
            event.stop()
            event.prevent_default()
            focused._forward_event(events.Key(event.key, event.character))
            return
        if not event.is_printable and await self._run_binding_now(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    async def _run_binding_now(self, key: str) -> bool:
        # Focused, so the chain is the app's: this widget first, keymap applied.
        for namespace, bindings in self.screen._modal_binding_chain:
            for binding in bindings.key_to_bindings.get(key, ()):
                if binding.priority:
                    continue
                if namespace is not self and binding.action not in FOCUS_ACTIONS:
                    return False  # an ancestor's: it runs as the key bubbles, as before
                if await self.app.run_action(binding.action, namespace):
                    return True
        return False
