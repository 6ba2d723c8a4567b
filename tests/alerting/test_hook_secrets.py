"""Token hygiene of the command hook: the token never reaches its argv, env, stdin or HOME."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from ito_tui import logs
from ito_tui.alerting import Alert, CommandHook, SentLedger
from ito_tui.config import Settings
from ito_tui.redaction import register_secret

TOKEN = "itotok-hook-5b0d9c3e7a"


@pytest.fixture
def file_logging(isolated: Path) -> Iterator[Path]:
    """ito-tui's own log file, in the temporary HOME, for the duration of the test."""
    path = logs.setup_logging(Settings())
    yield path
    logs.stop_logging()


async def run_once(hook: CommandHook, alert: Alert) -> None:
    hook.submit(alert)
    await hook.drain(10)


def test_the_token_reaches_no_argv_env_stdin_or_file_under_home(
    isolated: Path, file_logging: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated
    register_secret(TOKEN)
    monkeypatch.setenv("ITO_TOKEN", TOKEN)
    monkeypatch.setenv("ITO_SIM_TOKENS", f"alice:{TOKEN},bob:other-token")
    monkeypatch.setenv("WEBHOOK_AUTH", f"Bearer {TOKEN}")  # not ours, but it holds the token
    dump = home / "dump"
    dump.mkdir()
    hook_script = home / "hook.sh"
    hook_script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$0" "$@" > "{dump}/argv"\n'
        f'env > "{dump}/env"\n'
        f'cat > "{dump}/stdin"\n'
        f'cat "{dump}/stdin" >&2\n'  # stderr goes into the failure message and the log
        "exit 1\n",
        encoding="utf-8",
    )
    hook_script.chmod(0o755)
    failures: list[str] = []
    hook = CommandHook([str(hook_script), "--channel", "ops"], on_failure=failures.append)
    # A backend echoing the token into a run id and a reason it shows.
    alert = Alert("proposal", f"run_{TOKEN}", "Needs approval", f"{TOKEN} said so", seq=4)
    ledger = SentLedger.for_backend("http://127.0.0.1:8741")
    assert ledger.first_time(alert.key())
    asyncio.run(run_once(hook, alert))
    leaky = CommandHook([str(hook_script), f"--auth={TOKEN}"], on_failure=failures.append)
    asyncio.run(run_once(leaky, alert))

    assert hook.failed == 1 and leaky.failed == 1
    env = dict(
        line.split("=", 1) for line in (dump / "env").read_text().splitlines() if "=" in line
    )
    assert "PATH" in env and env["HOME"] == str(home)
    assert not {"ITO_TOKEN", "ITO_SIM_TOKENS", "WEBHOOK_AUTH"} & env.keys()
    assert (dump / "argv").read_text().splitlines()[1:] == ["--channel", "ops"]
    assert "[REDACTED]" in (dump / "stdin").read_text()
    assert len(failures) == 2 and failures[1].endswith("was not run: a token is in its arguments")
    logged = file_logging.read_text()
    assert "exited 1" in logged and "not run: a token is in its arguments" in logged
    files = [p for p in home.rglob("*") if p.is_file()]
    assert {"argv", "env", "stdin"} <= {p.name for p in files}
    assert any(p.suffix == ".jsonl" for p in files)  # the ledger is under HOME too
    for path in files:
        assert TOKEN.encode() not in path.read_bytes(), path
    for text in failures:
        assert TOKEN not in text
