"""Helpers for the end-to-end tests: the installed `ito-tui`, an isolated home, processes
found by a marker in their command line, free loopback ports."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

ITO_TUI = Path(sys.executable).parent / "ito-tui"


def isolated_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment for a real `ito-tui` run: own HOME, XDG dirs and TMPDIR under `root`,
    no ITO_* or keyring choice inherited from the developer's shell."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ITO_")
        and k not in {"PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS", "TMUX"}
    }
    home = root / "home"
    tmp = root / "tmp"
    for d in (home, tmp):
        d.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        LANG="C.UTF-8",
    )
    env.update(extra)
    return env


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie counts as gone)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] != "Z"


def pids_with(marker: str) -> list[int]:
    """Live processes whose command line contains `marker` (not this test process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Wait until none of `pids` is alive; return those still alive at the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [pid for pid in pids if alive(pid)]
        if not left:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@pytest.fixture
def e2e_env(tmp_path: Path) -> dict[str, str]:
    """An isolated environment for one real `ito-tui` run (see `isolated_env`)."""
    return isolated_env(tmp_path)
