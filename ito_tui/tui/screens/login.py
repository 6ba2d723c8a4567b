"""LoginModal: ask for an operator token (masked), check it, keep it in the keyring.

The token never appears on screen, in a notification, in a log line or in an
error message: only the Input (password mode) ever holds its text, and it is
cleared as soon as it is read.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput

if TYPE_CHECKING:
    from pydantic import SecretStr


class LoginModal(StyledOnFirstShow, ModalScreen[str | None]):
    """Dismisses with the operator name once the backend accepted the token, else None."""

    CSS_PATH = "login.tcss"
    AUTO_FOCUS = "#login-token"

    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="login.cancel",
            tooltip="Close without logging in",
        ),
    ]

    def __init__(self, reason: str = "", *, keyring_problem: str | None = None) -> None:
        super().__init__()
        self.reason = reason
        self.keyring_problem = keyring_problem

    def compose(self) -> ComposeResult:
        session = shell(self).session
        kept = session.token.persistent and not self.keyring_problem
        where = (
            "It is kept in your OS keyring (service ito-tui) and never shown."
            if kept
            else "It is kept in memory for this session only and never shown."
        )
        # Scrolls, so the field and buttons stay reachable at 80×24 under a long reason.
        with VerticalScroll(id="login-box", classes="dialog"):
            yield Static(
                Content.assemble(("Log in to ", "bold"), (session.backend_host, "bold $primary")),
                id="login-title",
            )
            if self.reason:
                yield Static(Content.styled(safe(self.reason), "$warning"), id="login-reason")
            yield Static(Content(f"Paste your operator token. {where}"), id="login-help")
            token = SteadyInput(
                password=True,
                placeholder="operator token",
                id="login-token",
                select_on_focus=False,
            )
            yield token
            yield Static("", id="login-error")
            with Horizontal(id="login-buttons", classes="dialog-buttons"):
                yield Button("Log in", id="login-submit", variant="primary")
                yield Button("Cancel", id="login-cancel")
            if self.keyring_problem:
                yield Static(
                    Content.styled(safe(self.keyring_problem), "$text-muted"),
                    id="login-keyring",
                )
        yield SteadyFooter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "login-submit":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _submit(self) -> None:
        field = self.query_one("#login-token", Input)
        text = field.value.strip()
        field.value = ""
        if not text:
            self._show_error("Enter a token first.")
            return
        self.query_one("#login-submit", Button).disabled = True
        self._show_error("Checking the token with the backend …", style="$text-muted")
        from pydantic import SecretStr  # pydantic loads after the first frame

        self.run_worker(
            self._login(SecretStr(text)), group="login", exclusive=True, exit_on_error=False
        )

    async def _login(self, token: SecretStr) -> None:
        from ito_tui.auth import KeyringUnavailable
        from ito_tui.client import AuthError, ItoError

        app = shell(self)
        cell = app.session.token
        previous = cell()
        cell.set(token)
        try:
            who = await app.client.whoami()
        except AuthError:
            cell.set(previous)
            self._failed("The backend rejected this token. Check it and try again.")
            return
        except ItoError as exc:
            cell.set(previous)
            self._failed(f"Could not check the token: {exc}")
            return
        try:
            # keyring may block on D-Bus: a thread, never the event loop.
            await asyncio.to_thread(cell.save, token)
        except (KeyringUnavailable, ValueError) as exc:
            # The cause only: the remedies were on the modal already.
            cause = exc.cause if isinstance(exc, KeyringUnavailable) else str(exc)
            self.app.notify(
                f"Logged in for this session only (the token is not stored): {cause}.",
                severity="warning",
                timeout=10,
                markup=False,
            )
        self.dismiss(who.operator)

    def _failed(self, message: str) -> None:
        self.query_one("#login-submit", Button).disabled = False
        self._show_error(message)
        self.query_one("#login-token", Input).focus()

    def _show_error(self, message: str, style: str = "$error") -> None:
        self.query_one("#login-error", Static).update(Content.styled(message, style))
