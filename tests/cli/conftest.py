"""Fixtures for the CLI tests: an isolated home, a throw-away keyring, a runner.

Every test gets its own config/data/state/log dirs (XDG_* and ITO_CONFIG_FILE
point into tmp_path), no ITO_* variables from the outer environment, and the
file-backed test keyring, in-process and in subprocesses alike, so nothing
here reads or writes the real home or keyring.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import keyring
import pytest

from ito_tui.cli import main
from tests.support.keyring import CLASS_PATH, ENV, FileKeyring

REPO_DIR = Path(__file__).resolve().parents[2]
"""On a subprocess's PYTHONPATH: its keyring backend is `tests.support.keyring.FileKeyring`."""
ITO_TUI = Path(sys.executable).parent / "ito-tui"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point every user directory, the settings file and the keyring into tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    for name in list(os.environ):
        if name.startswith("ITO_") or name in {"NO_COLOR", "FORCE_COLOR"}:
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    config_file = home / "config" / "ito-tui" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text("# ito-tui test settings (empty: defaults)\n")
    monkeypatch.setenv("ITO_CONFIG_FILE", str(config_file))
    monkeypatch.setenv(ENV, str(tmp_path / "keyring.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", CLASS_PATH)
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield home
    keyring.set_keyring(previous)


@pytest.fixture
def backend(sim_factory, monkeypatch: pytest.MonkeyPatch):
    """A fast desk_sim as the CLI's default, with its token in ITO_TOKEN.

    Proposals never expire here, so a run paused on one waits for the test's decision.
    """
    sim = sim_factory(proposal_ttl_s=1e12)
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    return sim


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Run `main(argv)` in-process; `stdin=` feeds a non-terminal stdin."""

    def run(*argv: str, stdin: str = "") -> Result:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        code = main(list(argv))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def subprocess_env(**extra: str) -> dict[str, str]:
    """The current (isolated) environment for a CLI subprocess, plus `extra`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_DIR), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def run_cli(
    argv: Sequence[str], *, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the installed `ito-tui` console script as a real subprocess."""
    return subprocess.run(
        [str(ITO_TUI), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env if env is not None else subprocess_env(),
        timeout=timeout,
        check=False,
    )
