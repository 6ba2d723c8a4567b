"""Run the TUI on a backend: build the token cell and the client, then the app."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ito_tui.tui.session import TokenCell

if TYPE_CHECKING:
    from pydantic import SecretStr

    from ito_tui.client import ItoClient
    from ito_tui.config import Settings


def client_factory(settings: Settings, token: TokenCell) -> Callable[[], ItoClient]:
    """A factory the app calls after its first paint (httpx is slow to import)."""

    def build() -> ItoClient:
        from ito_tui.client import ItoClient

        return ItoClient(
            settings.backend_url,
            token=token,
            insecure_http=settings.insecure_http,
            ca_bundle=settings.ca_bundle,
        )

    return build


def keyring_token(backend_url: str) -> TokenCell:
    """A token cell backed by the OS keyring (read and written only from threads)."""

    # keyring is imported in those threads too: not on the way to the first frame.
    def load() -> SecretStr | None:
        from ito_tui import auth

        return auth.get_token(backend_url)

    def save(token: SecretStr) -> None:
        from ito_tui import auth

        auth.store_token(backend_url, token)

    return TokenCell(loader=load, saver=save)


def run_tui(
    settings: Settings,
    read_only: bool = False,
    *,
    start: str | None = None,
    token: SecretStr | None = None,
) -> int:
    """Open the TUI on `settings.backend_url`; returns the exit code.

    `token` (the demo's) is used in memory only, never written to the keyring;
    without it the token comes from `ITO_TOKEN` or the keyring, and the login
    modal stores a new one there.
    """
    from ito_tui.logs import register_secret, setup_logging
    from ito_tui.tui.app import make_app

    # No writable log dir: the TUI still works, without a log file.
    with contextlib.suppress(OSError):
        setup_logging(settings)
    cell = TokenCell(token) if token is not None else keyring_token(settings.backend_url)
    if token is not None:
        register_secret(token)
    app = make_app(
        settings,
        client_factory(settings, cell),
        read_only=read_only,
        start=start,
        token=cell,
    )
    app.run()
    return app.return_code or 0
