"""A minimal host app for the run screens in snapshot tests: themes, session, a fake client
and the alert router.

The real `make_app` connects first (capabilities, whoami); snapshot tests need a frozen,
offline host, so this one wires only what the run screens use through `shell()`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import SecretStr
from textual.app import App
from textual.screen import Screen

from ito_tui.tui.alerts import Alerter
from ito_tui.tui.session import Session, TokenCell
from ito_tui.tui.themes import (
    DEFAULT_THEME,
    app_variable_defaults,
    builtin_themes_dir,
    load_themes,
)

from .pipeline_fakes import NOW


class RunScreensHarness(App[None]):
    """Hosts one run screen over a fake client, with the shipped themes."""

    def __init__(
        self,
        client: Any,
        start: Screen[Any],
        *,
        theme: str = DEFAULT_THEME,
        read_only: bool = False,
        demo: bool = True,
        clock_now: datetime = NOW,
    ) -> None:
        self._themes = load_themes([builtin_themes_dir()]).themes
        super().__init__()
        for t in self._themes.values():
            self.register_theme(t)
        self.theme = theme
        self.client = client
        self.session = Session(
            backend_url="http://127.0.0.1:8741",
            token=TokenCell(SecretStr("x")),
            read_only=read_only,
            clock=lambda: clock_now,
            operator="alice",
            connection="live",
        )
        if demo:
            from ito_tui.contract import Capabilities

            self.session.capabilities = Capabilities.model_validate(
                {
                    "api_version": "v1",
                    "server": {"name": "desk_sim", "version": "0", "mode": "simulated"},
                    "capabilities": [],
                    "limits": {
                        "max_budget_usd": "1000000.00",
                        "event_retention": 1000,
                        "heartbeat_s": 15,
                    },
                }
            )
        self._start = start
        self.alerter = Alerter(self)
        """The app's alert router, as `ItoApp.alerter` (no ledger: nothing is remembered)."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        generated = self.current_theme.to_color_system().generate()
        return app_variable_defaults(generated)

    def on_mount(self) -> None:
        self.push_screen(self._start)
