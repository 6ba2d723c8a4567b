"""Terminal and markup injection: every backend string is shown literally, CLI and TUI."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient
from ito_tui.tui.screens.proposal import ProposalModal
from tests.cli.test_commands import SPEC
from tests.tui.pipeline_live import capture_titles, live_app, shown_pipeline, start_run, wait_for
from tests.tui.shell_helpers import screen_text

from .conftest import Tampered
from .hostile import MARKUP, POISON, VISIBLE, poison, raw_controls, run_cli

pytestmark = [pytest.mark.faults, pytest.mark.slow]
SPEED = 20_000.0


def unknown_event(envelope: dict[str, Any], done: list[int]) -> dict[str, Any]:
    """Turn the first telemetry event into an unknown type carrying poisoned payload."""
    if envelope.get("type") == "telemetry" and not done:
        done.append(envelope["seq"])
        return {**envelope, "type": f"vendor.note{POISON}", "data": {"note": POISON}}
    return envelope


async def pending_proposal(url: str, run_id: str) -> Any:
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        for _ in range(600):
            pending = [p for p in await client.proposals(run_id) if p.status == "pending"]
            if pending:
                return pending[0]
            await asyncio.sleep(0.05)
    raise AssertionError("no proposal appeared")


def test_cli_prints_every_backend_string_visibly(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(scenario="loss-spike", speed=SPEED, approval_speed=5.0)
    t.tamper.poison(poison)
    done: list[int] = []
    t.tamper.event_hook(lambda e: unknown_event(e, done))
    run_id = asyncio.run(start_run(t.url, "loss-spike"))
    proposal = asyncio.run(pending_proposal(t.url, run_id))
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    monkeypatch.setenv("ITO_BACKEND_URL", t.url)
    outputs: dict[str, str] = {}
    for argv in (
        ("whoami",),
        ("bookings",),
        ("status", run_id),
        ("proposals", run_id),
        ("reject", proposal.proposal_id, "--yes", "--comment", "fine"),
        ("proposals", run_id),
        ("watch", run_id),
        ("status", run_id),
        ("estimate", *SPEC, "--scenario", "refused"),
    ):
        code, out, err = run_cli(capsys, monkeypatch, *argv)
        assert code in (0, 9), (argv, code, err[-500:])
        outputs[" ".join(argv)] = out + err
        assert raw_controls(out + err) == [], (argv, raw_controls(out + err))
    everything = "\n".join(outputs.values())
    assert done, "the unknown event was sent"
    for text in (*MARKUP, *VISIBLE):
        assert text in everything, text
    assert "vendor.note" in outputs[f"watch {run_id}"]
    assert POISON not in everything


async def test_tui_shows_every_backend_string_literally(
    tampered: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(scenario="loss-spike", speed=SPEED, approval_speed=5.0)
    t.tamper.poison(poison)
    done: list[int] = []
    t.tamper.event_hook(lambda e: unknown_event(e, done))
    run_id = await start_run(t.url, "loss-spike")
    app, _ = live_app(t.url, run_id, tmp_path)
    titles = capture_titles(monkeypatch)
    texts: list[str] = []
    async with app.run_test(size=(220, 60)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(
            pilot, lambda: isinstance(app.screen, ProposalModal), 60, "the proposal modal"
        )
        await pilot.pause(0.3)
        texts.append(screen_text(pilot))  # the trigger reason
        await pilot.press("escape")
        for tab in ("1", "2", "3"):
            await pilot.press(tab)
            await pilot.pause(0.6)
            texts.append(screen_text(pilot))
        assert done and any(e.type.startswith("vendor.note") for e in screen.tracker.log)
        await pilot.press("escape")  # back to nothing: the pipeline is the base screen
        await pilot.pause(0.2)
        assert app.is_running and app.return_code is None
        assert titles, "no terminal title was written"
        for title in titles:
            assert raw_controls(title) == [] and "pwned" not in title
    for text in texts:
        assert raw_controls(text) == [], raw_controls(text)
    everything = "\n".join(texts)
    for fragment in ("[bold red]x[/]", "[@click=app.quit]y[/]", "␛[2J", "␛]52;c;aGVsbG8=␇"):
        assert fragment in everything, fragment
    assert "vendor.note" in everything
