"""`OrderedInput`: an `Input` whose editing keys act in the order they were typed.

Textual inserts a printable character as soon as the focused `Input` handles its key,
but runs the `Input`'s own bindings (backspace, arrows, ctrl+u, enter, ...) only once
the key has bubbled up to the app, behind every key that arrived after it. Keys that
arrive in one read of the terminal (a paste, keystrokes coalesced by a slow ssh link)
were applied out of order: `ab⌫c` left `ab` in the field, and a backspace typed just
before a Tab deleted a character of the next field. Upstream: Textual issue 6605.

`OrderedInput` runs its own non-priority bindings (with the app's keymap applied) when
the key reaches it, so each key acts where and when it was typed; the app would have
asked the focused widget first too. Keys it has no binding for bubble as before. It
reads `DOMNode._bindings` and `App._keymap`, private to Textual 8.2.8 (pinned);
tests/tui/test_shell_keys.py types bursts into it.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class OrderedInput(Input):
    """`Input` that runs its own key bindings in typing order (see module docstring)."""

    async def _on_key(self, event: events.Key) -> None:
        if not event.is_printable and await self._run_own_binding(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    async def _run_own_binding(self, key: str) -> bool:
        # This widget's bindings, not the focused one's: in a burst the app may have
        # moved the focus on (a Tab behind this key) before this key reaches us.
        bindings = self._bindings.copy()
        if self.app._keymap:
            bindings.apply_keymap(self.app._keymap)
        for binding in bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                return True
        return False
