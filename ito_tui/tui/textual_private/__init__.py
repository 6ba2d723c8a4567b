"""What ito-tui needs of Textual that Textual has no public API for, in one package.

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
- `compose_headless_frames` (tests' CPU): `Screen._compositor_refresh`, `._dirty_widgets`,
  `Compositor._dirty_regions`; `App._display` writing nothing for a headless app.
- `ScreensWokenAfterBatch` (a repaint asked for during a batch update is drawn): no
  private name, public `batch_update` and `check_idle`; it works around Textual waking only
  the app when a batch ends (tests/tui/test_backdrop.py says when that is no longer so).

Each part is a module of this package (`terminal`, `styles`, `keys`, `frames`, `batches`),
its docstring saying why it is there and what it measured.
"""

from __future__ import annotations

from ito_tui.tui.textual_private.batches import ScreensWokenAfterBatch
from ito_tui.tui.textual_private.frames import compose_headless_frames
from ito_tui.tui.textual_private.keys import HOLD_LIMIT_S, KeysInOrder
from ito_tui.tui.textual_private.styles import (
    SharedRulesStylesheet,
    preset_footer_key,
    share_parsed_css,
)
from ito_tui.tui.textual_private.terminal import (
    SETTLE_S,
    TICK_S,
    QuietLinuxDriver,
    with_terminal,
    write_to_terminal,
)

TEXTUAL_VERSION = "8.2.8"
"""The Textual this package was written against (and tested with)."""

__all__ = [
    "HOLD_LIMIT_S",
    "SETTLE_S",
    "TEXTUAL_VERSION",
    "TICK_S",
    "KeysInOrder",
    "QuietLinuxDriver",
    "ScreensWokenAfterBatch",
    "SharedRulesStylesheet",
    "compose_headless_frames",
    "preset_footer_key",
    "share_parsed_css",
    "with_terminal",
    "write_to_terminal",
]
