"""Helpers for pilot tests of the run screens against a real desk_sim on 127.0.0.1."""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from rich.console import Console
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from ito_tui.client import ItoClient
from ito_tui.config import Alerts, Settings
from ito_tui.contract import SimOptions, TrainingSpec
from ito_tui.state.changes import Changes
from ito_tui.tui import make_app
from ito_tui.tui.app import ItoApp
from ito_tui.tui.screens.pipeline import PipelineScreen
from ito_tui.tui.session import TokenCell
from tests.support.waiting import wait_for

__all__ = [
    "APPROVAL_SPEED",
    "capture_titles",
    "has_pipeline",
    "live_app",
    "pipeline_of",
    "record_seqs",
    "shown_pipeline",
    "start_run",
    "wait_for",
]

APPROVAL_SPEED = 5.0
"""While a proposal waits the sim clock crawls, so it cannot expire during a test."""


async def start_run(
    url: str,
    scenario: str,
    *,
    token: str = "s3cret",  # noqa: S107 - the simulator's test token
    model_size: str = "1.5B",
    post_training: str = "rlvr",
    **sim: Any,
) -> str:
    """Submit a run (1.5B to RLVR by default) on the first free completed booking; returns
    its id."""
    async with ItoClient(url, token=SecretStr(token)) as client:
        caps = await client.capabilities()
        bookings = [b for b in await client.bookings(status="completed") if not b.active_run_id]
        booking = bookings[0]
        spec = TrainingSpec(
            booking_id=booking.booking_id,
            model_size=model_size,
            data_ref="catalog://fineweb-edu@2024-10",
            target_capability=caps.target_capabilities[0],
            budget_usd=caps.limits.max_budget_usd,
            post_training=post_training,
            sim=SimOptions(scenario=scenario, **sim),
        )
        estimate = await client.estimate(spec)
        assert not estimate.refusals, estimate.refusals
        budget = min(caps.limits.max_budget_usd, max(Decimal(1000), estimate.usd_p90 * 3))
        run = await client.create_run(spec.model_copy(update={"budget_usd": budget}))
        return run.run_id


def live_app(
    url: str,
    run_id: str,
    tmp: Path,
    *,
    token: str = "s3cret",  # noqa: S107 - the simulator's test token
    read_only: bool = False,
    alerts: Alerts | None = None,
) -> tuple[ItoApp, ItoClient]:
    """The real app (make_app) opened on `run_id`, with its own client."""
    config = tmp / "config.toml"
    if not config.exists():
        config.write_text("", encoding="utf-8")
    settings = Settings(backend_url=url, refresh_s=1.0, alerts=alerts or Alerts())
    cell = TokenCell(SecretStr(token))
    client = ItoClient(url, token=cell)
    app = make_app(settings, client, read_only=read_only, start=run_id, token=cell)
    return app, client


def pipeline_of(app: ItoApp) -> PipelineScreen:
    for screen in app.screen_stack:
        if isinstance(screen, PipelineScreen):
            return screen
    raise AssertionError(f"no pipeline screen in {app.screen_stack}")


async def shown_pipeline(pilot: Pilot[Any], app: ItoApp) -> PipelineScreen:
    """The pipeline screen, once the app has opened it (anywhere in its stack)."""
    await wait_for(pilot, lambda: has_pipeline(app), what="the run screen")
    return pipeline_of(app)


def record_seqs(screen: PipelineScreen) -> list[int]:
    """The seqs the screen's tracker accepts from now on, in order (a live list)."""
    seen: list[int] = []
    feed = screen.tracker.feed

    def recording_feed(event: Any) -> Changes:
        changes = feed(event)
        if changes:  # applied (not history, not a duplicate)
            seen.append(event.seq)
        return changes

    screen.tracker.feed = recording_feed  # type: ignore[method-assign]
    return seen


def has_pipeline(app: ItoApp) -> bool:
    return any(isinstance(s, PipelineScreen) for s in app.screen_stack)


def capture_titles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every terminal title (OSC 2) the app writes to its (headless) driver.

    A title is what lies between the sequence's opening and its final BEL, so a control
    character smuggled into it (even a BEL) stays in the recorded title.
    """
    titles: list[str] = []
    real_write = HeadlessDriver.write

    def write(self: HeadlessDriver, data: str) -> None:
        if data.startswith("\x1b]2;") and data.endswith("\x07"):
            titles.append(data[4:-1])
        real_write(self, data)

    monkeypatch.setattr(HeadlessDriver, "write", write)
    return titles


def drawn(renderable: object, width: int = 120) -> str:
    """What a widget's `render()` draws, as plain text (a Rich Group or Table too)."""
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()
