"""HelpScreen: the keys of the screen underneath, with what they do (F1 or ?)."""

from __future__ import annotations

from typing import NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.widgets.steady_footer import SteadyFooter


class KeyRow(NamedTuple):
    """One line of the help: keys, what they do, and the id to rebind them by."""

    keys: str
    description: str
    tooltip: str
    enabled: bool
    binding_id: str | None


def binding_rows(app_screen: Screen[object]) -> list[KeyRow]:
    """The described bindings of the screen (and its focused widgets) and the app's.

    Only bindings with an id are listed, ours: Textual's own widget keys (text
    editing, cursor movement) are the usual ones and would bury the rest.
    """
    app = app_screen.app
    rows: dict[tuple[str, str], KeyRow] = {}
    ordered = sorted(app_screen.active_bindings.values(), key=lambda active: active.node is app)
    for active in ordered:
        binding = active.binding
        if not binding.description or binding.system or binding.id is None:
            continue  # Textual's own focus/copy keys have no id: they are the usual ones
        keys = app.get_key_display(binding)
        entry = rows.get((binding.action, binding.description))
        if entry is not None:
            keys = f"{entry.keys}, {keys}"
        rows[(binding.action, binding.description)] = KeyRow(
            keys, binding.description, binding.tooltip, active.enabled, binding.id
        )
    return list(rows.values())


class HelpScreen(StyledOnFirstShow, ModalScreen[None]):
    """Lists the bindings of `target` (the screen it was opened over)."""

    CSS_PATH = "help.tcss"

    BINDINGS = [
        Binding(
            "escape,f1,question_mark,q",
            "dismiss",
            "Close help",
            id="help.close",
            tooltip="Close this help",
        ),
    ]

    def __init__(self, target: Screen[object]) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        rows = binding_rows(self.target)
        title = self.target.title or type(self.target).__name__.removesuffix("Screen")
        with Vertical(id="help-box", classes="dialog"):
            yield Static(
                Content.assemble(("Keys — ", "bold"), (safe(title), "bold $primary")),
                id="help-title",
            )
            with VerticalScroll(id="help-keys"):
                lines = []
                width = max((len(row.keys) for row in rows), default=4) + 2
                for row in rows:
                    style = "" if row.enabled else "$text-disabled"
                    lines.append(
                        Content.assemble(
                            (row.keys.ljust(width), f"bold $accent {style}".strip()),
                            (row.description, style),
                            (f" — {row.tooltip}" if row.tooltip else "", "$text-muted"),
                            ("" if row.enabled else " (not available now)", "$text-disabled"),
                            (f"  [{row.binding_id}]" if row.binding_id else "", "$text-disabled"),
                        )
                    )
                yield Static(Content("\n").join(lines), id="help-lines")
            yield Static(
                Content.styled(
                    "ctrl+p opens the command palette: every action, any booking or run by "
                    "id. Rebind a key in the settings' keymap by the [id] shown.",
                    "$text-muted",
                ),
                id="help-footer",
            )
        yield SteadyFooter()
