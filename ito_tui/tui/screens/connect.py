"""ConnectScreen: the first screen — paints at once, then reads capabilities and whoami."""

from __future__ import annotations

import asyncio
import importlib
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
        app = shell(self)
        token = app.session.token
        # Off the event loop and side by side: the client's import (httpx is slow to
        # import) and the keyring read (may block on D-Bus).
        importing = asyncio.to_thread(importlib.import_module, "ito_tui.client")
        keyring_problem: str | None = None
        if token.loaded:
            await importing
        else:
            _, keyring_problem = await asyncio.gather(
                importing, asyncio.to_thread(_load_quietly, token.load)
            )
        from ito_tui.client import AuthError

        client = app.client
        capabilities = await client.capabilities(refresh=True)

        async def active_runs() -> int:
            if not capabilities.has("runs.read"):
                return 0
            return sum(1 for run in await client.runs() if str(run.state) not in _TERMINAL)

        login_reason: str | None = None
        try:
            try:
                async with asyncio.TaskGroup() as group:
                    who = group.create_task(client.whoami())
                    active = group.create_task(active_runs())
            except* AuthError as errors:
                login_reason = str(errors.exceptions[0])
        except ExceptionGroup as errors:
            # One error for the app's handler, as if the calls had run one by one.
            raise errors.exceptions[0] from None
        if login_reason is not None:
            self.post_message(self.LoginNeeded(capabilities, login_reason, keyring_problem))
            return
        self.post_message(self.Connected(capabilities, who.result().operator, active.result()))


_TERMINAL = frozenset({"completed", "failed", "cancelled"})


def _load_quietly(load: Callable[[], object]) -> str | None:
    """Run `load`; an unavailable keyring means "not logged in" and its reason is returned."""
    from ito_tui.auth import KeyringUnavailable

    try:
        load()
    except KeyringUnavailable as exc:
        return str(exc)
    return None
