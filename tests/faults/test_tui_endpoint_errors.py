"""The pipeline screen when one endpoint it reads answers with a problem (not malformed data):
the error is shown once, and the live view keeps following the run to its end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.types import ASGIApp

from ito_tui.desk_sim import create_app
from ito_tui.tui.screens.error import ErrorScreen
from tests.support.servers import sim_config
from tests.tui.pipeline_live import live_app, shown_pipeline, start_run, wait_for

from .tamper import Tamper
from .test_secrets_echo import TOKEN, Echo

pytestmark = [pytest.mark.faults, pytest.mark.slow]


@pytest.mark.parametrize("status", [400, 404])
async def test_a_problem_from_the_telemetry_backfill_does_not_stop_the_live_view(
    serve_asgi: Callable[[ASGIApp], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
) -> None:
    config = sim_config(tmp_path / "sim.db", speed=20_000.0, tokens={TOKEN: "alice"})
    echo = Echo(Tamper(create_app(config)))
    echo.on(r"/telemetry$", status)
    url = serve_asgi(echo)
    run_id = await start_run(url, "happy", token=TOKEN)
    app, _ = live_app(url, run_id, tmp_path, token=TOKEN)
    notices: list[str] = []
    real_notify = type(app).notify

    def notify(self: Any, message: str, *args: Any, **kwargs: Any) -> None:
        notices.append(f"{kwargs.get('title', '')}: {message}")
        real_notify(self, message, *args, **kwargs)

    monkeypatch.setattr(type(app), "notify", notify)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: echo.hits >= 1, 20, "the telemetry backfill")
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        assert screen.run_state.outcome == "completed"
        assert any("the token you sent was" in n for n in notices), notices
        assert not any(isinstance(s, ErrorScreen) for s in app.screen_stack)
