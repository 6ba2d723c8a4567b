"""ErrorScreen: the backend cannot be reached or refused us; retry, log in or quit. No fallback."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Static

from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.steady_footer import SteadyFooter

NO_FALLBACK = (
    "ito-tui never falls back to a simulated backend. To try the program "
    "without a backend, run `ito-tui demo`."
)


class ErrorScreen(StyledOnFirstShow, Screen[None]):
    """A clear statement of what failed and where, with retry.

    `login` offers the login modal too (for a rejected token the user dismissed).
    """

    CSS_PATH = "error.tcss"
    AUTO_FOCUS = "#retry"

    BINDINGS = [
        Binding(
            "r",
            "retry",
            "Retry",
            id="error.retry",
            tooltip="Try to connect to the backend again",
        ),
        Binding(
            "l",
            "login",
            "Log in",
            id="error.login",
            tooltip="Enter an operator token for this backend",
        ),
        Binding("q", "app.quit", "Quit", id="error.quit", tooltip="Leave ito-tui", show=False),
    ]

    def __init__(self, title: str, detail: str, *, login: bool = False) -> None:
        super().__init__()
        self.error_title = title
        self.detail = detail
        self.offer_login = login

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection="offline",
            demo=session.demo,
            read_only=session.read_only,
        )
        with VerticalScroll(id="error-box", classes="message-box"):
            yield Static(Content.styled(safe(self.error_title), "bold $error"), id="error-title")
            yield Static(
                Content.assemble(
                    ("Backend  ", "$text-muted"),
                    (safe(session.backend_url), "bold"),
                    "\n",
                    ("Reason   ", "$text-muted"),
                    safe(self.detail),
                ),
                id="error-detail",
            )
            yield Static(Content.styled(NO_FALLBACK, "$text-muted"), id="error-hint")
            with Horizontal(id="error-buttons"):
                yield Button("Retry", id="retry", variant="primary", action="screen.retry")
                if self.offer_login:
                    yield Button("Log in", id="login", action="screen.login")
                yield Button("Quit", id="quit", action="app.quit")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "login":
            return self.offer_login
        return True

    async def action_retry(self) -> None:
        await self.app.run_action("reconnect")

    async def action_login(self) -> None:
        await self.app.run_action("login")
