"""ConnectScreen: the first screen — paints at once, then reads capabilities and whoami."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker

from ito_tui.contract import Capabilities
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.header import HeaderStrip


class ConnectScreen(Screen[None]):
    """Says where it is connecting, and posts `Connected` or `LoginNeeded` when it knows.

    Other failures (unreachable backend, a 501) propagate from the worker to the
    app's single error handler.
    """

    CSS_PATH = "connect.tcss"

    @dataclass
    class Connected(Message):
        """The backend answered and accepted the token."""

        capabilities: Capabilities
        operator: str
        active_runs: int

    @dataclass
    class LoginNeeded(Message):
        """The backend answered but has no valid token for us (401)."""

        capabilities: Capabilities
        reason: str
        keyring_problem: str | None = None

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(backend_host=session.backend_host, connection="connecting")
        with Middle(), Center():
            yield Static(
                Content.assemble(
                    "Connecting to ",
                    (session.backend_host, "bold"),
                    " …\n",
                    ("Reading the backend's capabilities and who you are.", "$text-muted"),
                ),
                id="connect-message",
            )
        yield Footer()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)

    def on_mount(self) -> None:
        # Paint first, connect after: the first frame never waits on the network.
        self.call_after_refresh(self.connect)

    def connect(self) -> None:
        """Start (or restart) the connection step."""
        self.run_worker(self._connect(), group="connect", exclusive=True, exit_on_error=False)

    async def _connect(self) -> None:
        from ito_tui.client import AuthError

        app = shell(self)
        token = app.session.token
        keyring_problem = None
        if not token.loaded:
            # The keyring may block on D-Bus: read it off the event loop.
            keyring_problem = await asyncio.to_thread(_load_quietly, token.load)
        client = app.client
        capabilities = await client.capabilities(refresh=True)
        try:
            who = await client.whoami()
        except AuthError as exc:
            self.post_message(self.LoginNeeded(capabilities, str(exc), keyring_problem))
            return
        active = 0
        if capabilities.has("runs.read"):
            runs = await client.runs()
            active = sum(1 for run in runs if str(run.state) not in _TERMINAL)
        self.post_message(self.Connected(capabilities, who.operator, active))


_TERMINAL = frozenset({"completed", "failed", "cancelled"})


def _load_quietly(load: Callable[[], object]) -> str | None:
    """Run `load`; an unavailable keyring means "not logged in" and its reason is returned."""
    from ito_tui.auth import KeyringUnavailable

    try:
        load()
    except KeyringUnavailable as exc:
        return str(exc)
    return None
