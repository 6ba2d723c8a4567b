"""Redaction happens at the sinks, never in the data being parsed.

A short token that is a substring of field names (`ma` in `max_budget_usd`) must leave
every command working: the client parses the bytes the server sent. A backend that
echoes the (long) token into displayed fields, the booking's hostnames, problem
details, event messages, must never get it onto the CLI's output (`--json` too), the
TUI's screen, the log file or an exception's text: each sink redacts it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from ito_tui import logs, paths
from ito_tui.config import Settings
from ito_tui.redaction import REDACTED
from tests.support.toasts import record_toasts
from tests.tui.pipeline_live import live_app, shown_pipeline, start_run, wait_for
from tests.tui.shell_helpers import screen_text

from .conftest import Tampered
from .hostile import TEXT_KEYS, run_cli

pytestmark = pytest.mark.faults
TOKEN = "tok-ECHO-5b1e7d3a9c"


@pytest.mark.parametrize("token", ["ma", "usd", "id", "state"])
def test_a_token_that_is_part_of_field_names_leaves_every_command_working(
    token: str,
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t: Tampered = tampered(tokens={token: "alice"})
    run_id = asyncio.run(start_run(t.url, "happy", token=token))
    monkeypatch.setenv("ITO_TOKEN", token)
    monkeypatch.setenv("ITO_BACKEND_URL", t.url)
    for argv in (
        ("whoami",),
        ("bookings",),
        ("runs",),
        ("runs", "--json"),
        ("status", run_id),
        ("proposals", run_id),
        ("watch", run_id, "--since", "0"),
    ):
        code, out, err = run_cli(capsys, monkeypatch, *argv)
        assert code == 0, (argv, code, err[-800:])
        assert "contract" not in err, (argv, err[-800:])
        if argv[0] in ("runs", "status", "watch"):
            assert run_id in out, (argv, out[-800:])


def echo(obj: Any, key: str | None = None) -> Any:
    """`obj` with the token appended to every free-text string (hostnames, details, …)."""
    if isinstance(obj, dict):
        return {k: echo(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [echo(v, key) for v in obj]
    if isinstance(obj, str) and key in TEXT_KEYS:
        return f"{obj} (seen by {TOKEN})"
    return obj


@pytest.fixture
def log_file(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The log file the commands write, at DEBUG (removed again afterwards)."""
    monkeypatch.setenv("ITO_LOG_LEVEL", "DEBUG")
    root = logging.getLogger()
    level = root.level
    yield paths.log_dir() / logs.LOG_FILE
    logs.stop_logging()
    root.setLevel(level)


def test_an_echoed_token_never_reaches_cli_output_or_the_log(
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    log_file: Path,
) -> None:
    t: Tampered = tampered(tokens={TOKEN: "alice"})
    t.tamper.poison(echo)
    run_id = asyncio.run(start_run(t.url, "happy", token=TOKEN))
    monkeypatch.setenv("ITO_TOKEN", TOKEN)
    monkeypatch.setenv("ITO_BACKEND_URL", t.url)
    outputs: list[str] = []
    for argv in (
        ("bookings", "--all", "--json"),
        ("status", run_id),
        ("status", run_id, "--json"),
        ("watch", run_id, "--since", "0"),
        ("watch", run_id, "--since", "0", "--json"),
        ("status", "run_nope"),  # a problem whose detail echoes the token
    ):
        _, out, err = run_cli(capsys, monkeypatch, *argv)
        outputs.append(out + err)
    everything = "\n".join(outputs)
    # The echo really arrived (the sinks redacted it), and nothing else was lost.
    assert everything.count(REDACTED) >= 5, everything[-2000:]
    assert "not found" in outputs[-1].lower() and REDACTED in outputs[-1]
    assert "(seen by" in everything and TOKEN not in everything
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert log_file.exists() and TOKEN not in log_file.read_text(encoding="utf-8")


async def test_an_echoed_token_never_reaches_the_tui_screen(
    tampered: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=20_000.0, tokens={TOKEN: "alice"})
    t.tamper.poison(echo)
    run_id = await start_run(t.url, "happy", token=TOKEN)
    logs.setup_logging(Settings.load(log_level="DEBUG"))
    app, _ = live_app(t.url, run_id, tmp_path, token=TOKEN)
    toasts = record_toasts(app, monkeypatch, titled=True)
    texts: list[str] = []
    try:
        async with app.run_test(size=(200, 50)) as pilot:
            screen = await shown_pipeline(pilot, app)
            await wait_for(pilot, lambda: len(screen.tracker.log) > 5, 30, "events")
            for tab in ("1", "2", "3"):
                await pilot.press(tab)
                await pilot.pause(0.5)
                texts.append(screen_text(pilot))
            texts += toasts
            assert app.is_running
    finally:
        logs.stop_logging()
    everything = "\n".join(texts)
    assert "(seen by [REDACTED])" in everything, everything[-2000:]
    assert TOKEN not in everything
    log_text = (paths.log_dir() / logs.LOG_FILE).read_text(encoding="utf-8")
    assert TOKEN not in log_text
