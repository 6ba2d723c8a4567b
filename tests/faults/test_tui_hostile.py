"""The TUI against a hostile backend: malformed data is named and contained, 401 asks to log in."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ito_tui.tui.screens.error import ErrorScreen
from ito_tui.tui.screens.login import LoginModal
from tests.support.toasts import record_toasts
from tests.tui.pipeline_live import live_app, shown_pipeline, start_run, wait_for

from .conftest import Tampered

pytestmark = [pytest.mark.faults, pytest.mark.slow]
SPEED = 20_000.0
"""A run takes several seconds: long enough to open the screen and misbehave mid-run."""


async def test_malformed_telemetry_is_named_and_the_pipeline_keeps_following(
    tampered: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    t.tamper.break_json(r"/telemetry$", lambda o: {**o, "items": [{"seq": "seven"}]})
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    notes = record_toasts(app, monkeypatch, titled=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(
            pilot,
            lambda: any("/telemetry" in n for n in notes),
            20,
            "a notice about the telemetry endpoint",
        )
        (notice,) = [n for n in notes if "/telemetry" in n][:1]
        assert "GET /v1/runs/{id}/telemetry" in notice and "items.0.seq" in notice, notice
        # The rest of the screen keeps working: the stream still drives it to the end.
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        assert screen.run_state.outcome == "completed"
        assert not any(isinstance(s, ErrorScreen) for s in app.screen_stack)
        await pilot.press("3")  # and the keys still work
        await pilot.pause(0.2)
        assert app.is_running


async def test_malformed_event_is_shown_with_its_field_and_the_run_goes_on(
    tampered: Any, tmp_path: Path
) -> None:
    t: Tampered = tampered(speed=SPEED)
    broken: list[int] = []

    def hook(envelope: dict[str, Any]) -> dict[str, Any]:
        if envelope.get("type") == "stage.started" and not broken:
            broken.append(envelope["seq"])
            return {**envelope, "data": {**envelope["data"], "stage": {"nested": ["x"]}}}
        return envelope

    t.tamper.event_hook(hook)
    run_id = await start_run(t.url, "happy")
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        entries = [e for e in screen.tracker.log if e.type.startswith("invalid:")]
        assert broken and [e.seq for e in entries] == broken
        assert "stage" in entries[0].text and "invalid:stage.started" in entries[0].type
        assert screen.run_state.outcome == "completed"
        assert not any(isinstance(s, ErrorScreen) for s in app.screen_stack)


async def test_token_revoked_mid_run_asks_to_log_in_and_stops_asking(
    tampered: Any, tmp_path: Path
) -> None:
    t: Tampered = tampered(speed=SPEED)
    run_id = await start_run(t.url, "happy")
    t.tamper.revoke_after_events(15)
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: t.tamper.revoked_at is not None, 30, "the revocation")
        await wait_for(pilot, lambda: isinstance(app.screen, LoginModal), 15, "the login prompt")
        # A request already on its way when the prompt came up (the app's alert watcher
        # polls the runs too) may still arrive; what follows must not.
        await pilot.pause(0.5)
        asked = len(t.tamper.after_revocation())
        # No retry loop: while the prompt waits for a person, nothing more is sent.
        await pilot.pause(3.0)
        await asyncio.sleep(0)
        after = t.tamper.after_revocation()
        assert len(after) == asked, after
        assert asked <= 3, after
        assert app.is_running
