"""What every screen of a session shares: backend, operator, capabilities, token, clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, cast
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pydantic import SecretStr
    from textual.message_pump import MessagePump

    from ito_tui.client.protocol import ItoApi
    from ito_tui.contract import Capabilities


def utc_now() -> datetime:
    """The current time in UTC (the default clock; tests freeze their own)."""
    return datetime.now(UTC)


class TokenCell:
    """The bearer token the client reads on every request, held in memory only.

    `ItoClient(token=cell)` calls it; it never blocks: loading from the keyring
    is a separate, blocking `load()` the connection step runs in a thread.
    """

    def __init__(
        self,
        token: SecretStr | None = None,
        *,
        loader: Callable[[], SecretStr | None] | None = None,
        saver: Callable[[SecretStr], None] | None = None,
    ) -> None:
        self._token = token
        self._loader = loader
        self._saver = saver
        self.loaded = loader is None

    def __call__(self) -> SecretStr | None:
        return self._token

    def __repr__(self) -> str:
        return f"TokenCell(set={self._token is not None})"

    def set(self, token: SecretStr | None) -> None:
        """Use `token` from now on, in memory only."""
        self._token = token

    def load(self) -> SecretStr | None:
        """Read the token from its store (may block on D-Bus: call from a thread)."""
        if self._loader is not None:
            self._token = self._loader()
        self.loaded = True
        return self._token

    def save(self, token: SecretStr) -> None:
        """Keep `token` in memory and in its store (blocking: call from a thread)."""
        if self._saver is not None:
            self._saver(token)
        self._token = token
        self.loaded = True

    @property
    def persistent(self) -> bool:
        """Whether `save` writes the token somewhere (the keyring) besides memory."""
        return self._saver is not None


@dataclass
class Session:
    """Facts about the connection that screens show and check; mutable by the app only."""

    backend_url: str
    token: TokenCell
    read_only: bool = False
    clock: Callable[[], datetime] = utc_now
    operator: str | None = None
    capabilities: Capabilities | None = None
    connection: str = "connecting"

    @property
    def backend_host(self) -> str:
        """Host (and port) only: never a path, query or credentials."""
        parts = urlsplit(self.backend_url)
        host = parts.hostname or self.backend_url
        return f"{host}:{parts.port}" if parts.port else host

    @property
    def demo(self) -> bool:
        """True while connected to a simulated backend: every screen says DEMO."""
        return self.capabilities is not None and self.capabilities.simulated


class Shell(Protocol):
    """What screens may use of the app: the one client and the session."""

    @property
    def client(self) -> ItoApi: ...

    @property
    def session(self) -> Session: ...


def shell(node: MessagePump) -> Shell:
    """The running ItoApp seen through the `Shell` protocol (screens only)."""
    return cast("Shell", node.app)


def poll_interval(node: MessagePump) -> float:
    """Seconds between a screen's polls of the backend: the `refresh_s` setting, never
    under a second (the runs list and the Decisions screen poll this way)."""
    settings = getattr(node.app, "settings", None)
    return max(1.0, float(getattr(settings, "refresh_s", 2.0)))
