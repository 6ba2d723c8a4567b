"""HelpScreen: the keys of the screen underneath, with what they do (F1 or ?)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ito_tui.tui.format import safe


def binding_rows(app_screen: Screen[object]) -> list[tuple[str, str, str, bool]]:
    """(keys, description, tooltip, enabled) for the screen's and the app's bindings.

    The screen's come first; keys of the focused widget (text editing, cursor
    movement) are left out: they are the usual ones and would bury the rest.
    """
    app = app_screen.app
    rows: dict[tuple[str, str], tuple[str, str, str, bool]] = {}
    ordered = sorted(app_screen.active_bindings.values(), key=lambda active: active.node is app)
    for active in ordered:
        binding = active.binding
        if not binding.description or binding.system:
            continue
        if active.node is not app_screen and active.node is not app:
            continue
        key = app.get_key_display(binding)
        entry = rows.get((binding.action, binding.description))
        if entry is not None:
            key = f"{entry[0]}, {key}"
        rows[(binding.action, binding.description)] = (
            key,
            binding.description,
            binding.tooltip,
            active.enabled,
        )
    return list(rows.values())


class HelpScreen(ModalScreen[None]):
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
                width = max((len(key) for key, *_ in rows), default=4) + 2
                for key, description, tooltip, enabled in rows:
                    style = "" if enabled else "$text-disabled"
                    lines.append(
                        Content.assemble(
                            (key.ljust(width), f"bold $accent {style}".strip()),
                            (description, style),
                            (f" — {tooltip}" if tooltip else "", "$text-muted"),
                            ("" if enabled else " (not available now)", "$text-disabled"),
                        )
                    )
                yield Static(Content("\n").join(lines), id="help-lines")
            yield Static(
                Content.styled(
                    "ctrl+p opens the command palette: every action, any booking or run by id.",
                    "$text-muted",
                ),
                id="help-footer",
            )
