"""Helpers for the app-wide alert tests: the real app with a bell counter, on a real desk_sim."""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any, ClassVar

from pydantic import SecretStr

from ito_tui.client import ItoClient
from ito_tui.config import Alerts, Settings
from ito_tui.tui import app as app_module
from ito_tui.tui.app import ItoApp
from ito_tui.tui.session import Session, TokenCell

from .pipeline_live import wait_for

PROPOSAL_SCALE = 10_000.0
"""A showcase run at this time scale proposes its loss-spike rollback about 7 s after it
starts: after the app's watcher (polling every second) follows it, even on a busy machine."""
SLOW_SCALE = 20.0
"""A run that goes on for the whole test."""


class BellApp(ItoApp):
    """The real app, counting the bells it rings."""

    # Textual reads CSS_PATH relative to the module of the class: the app's own files.
    CSS_PATH: ClassVar[list[str | PurePath]] = [
        Path(app_module.__file__).parent / path for path in ItoApp.CSS_PATH
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bells = 0

    def bell(self) -> None:
        self.bells += 1
        super().bell()


def alert_app(
    url: str,
    *,
    start: str | None = "runs",
    alerts: Alerts | None = None,
    token: str = "s3cret",  # noqa: S107 - the simulator's test token
    poll_s: float = 1.0,
) -> BellApp:
    """The real app (as `make_app` builds it) on `url`, its watcher polling every `poll_s`."""
    settings = Settings(backend_url=url, refresh_s=1.0, alerts=alerts or Alerts(desktop="off"))
    cell = TokenCell(SecretStr(token))
    session = Session(backend_url=url, token=cell)
    app = BellApp(settings, ItoClient(url, token=cell), session, start=start)
    app.alerting.poll_s = poll_s
    return app


async def following(pilot: Any, app: ItoApp, run_id: str) -> None:
    """Wait until the app's watcher follows `run_id`'s stream, before its proposal."""
    await wait_for(
        pilot,
        lambda: app.alerting.watcher is not None and run_id in app.alerting.watcher.following,
        30,
        f"the watcher to follow {run_id}",
    )
    early = [p for p in app.needs_you.pending if p.run_id == run_id]
    assert not early, f"{run_id} proposed before the watcher followed it (a slow machine?)"


async def proposals_of(url: str, run_id: str) -> list[Any]:
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        return await client.proposals(run_id)
