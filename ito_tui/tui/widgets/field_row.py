"""FieldRow: a labelled form control with its message underneath (why it is invalid, or a hint)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label, Static


class FieldRow(Vertical):
    """`label` and `control` on one line; `error` (red) or `hint` (muted) below.

    The error wins over the hint; neither takes a line when empty, so the form
    stays compact at 80×24.
    """

    DEFAULT_CSS = """
    FieldRow {
        height: auto;
        margin-bottom: 0;
    }
    FieldRow > Horizontal {
        height: auto;
    }
    FieldRow .field-label {
        width: 13;
        padding: 0 1 0 0;
        color: $text-muted;
    }
    FieldRow .field-message {
        margin-left: 13;
        height: auto;
        display: none;
    }
    FieldRow.-has-message .field-message {
        display: block;
    }
    FieldRow.-invalid .field-label {
        color: $error;
    }
    """

    error: reactive[str] = reactive("")
    hint: reactive[str] = reactive("")

    def __init__(self, label: str, control: Widget, *, hint: str = "", id: str | None = None):
        super().__init__(id=id)
        self.label = label
        self.control = control
        self.set_reactive(FieldRow.hint, hint)

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label(self.label, classes="field-label")
            yield self.control
        yield Static("", classes="field-message")

    def on_mount(self) -> None:
        self._show()

    def watch_error(self) -> None:
        self._show()

    def watch_hint(self) -> None:
        self._show()

    def _show(self) -> None:
        if not self.is_mounted:
            return
        message = self.query_one(".field-message", Static)
        if self.error:
            message.update(Content.styled(f"✗ {self.error}", "$error"))
        elif self.hint:
            message.update(Content.styled(self.hint, "$text-muted"))
        self.set_class(bool(self.error), "-invalid")
        self.set_class(bool(self.error or self.hint), "-has-message")
