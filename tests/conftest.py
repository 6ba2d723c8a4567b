"""Shared fixtures: a real simulated backend on 127.0.0.1 with an ephemeral port, each test's
own state dir and secret registry, and the one in-memory keyring."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from starlette.types import ASGIApp

from ito_tui.desk_sim import create_app
from tests.support.keyring import MemoryKeyring
from tests.support.servers import ServerThread, SimHandle, sim_config


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own state dir, never the user's: the TUI remembers there which alerts
    it sent (a run id of one test's desk_sim would silence the same alert in the next)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg_state_home"))


@pytest.fixture(autouse=True)
def forget_registered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens a test's client sent stay redacted in that test only (the registry is per process)."""
    from ito_tui import redaction

    monkeypatch.setattr(redaction, "_SECRETS", redaction._SECRETS)


@pytest.fixture
def sim_factory(tmp_path: Any) -> Iterator[Callable[..., SimHandle]]:
    """Start simulated backends with SimConfig overrides; all stop at teardown."""
    running: list[ServerThread] = []

    def start(**overrides: Any) -> SimHandle:
        config = sim_config(tmp_path / f"sim-{len(running)}.db", **overrides)
        app = create_app(config)
        server = ServerThread(app)
        port = server.start()
        running.append(server)
        return SimHandle(url=f"http://127.0.0.1:{port}", config=config, app=app)

    yield start
    for server in running:
        server.stop()


@pytest.fixture
def sim(sim_factory: Callable[..., SimHandle]) -> SimHandle:
    """A running simulated backend: scenario `happy`, high speed, alice:s3cret and bob:hunter2."""
    return sim_factory()


@pytest.fixture
def serve_asgi() -> Iterator[Callable[[ASGIApp], str]]:
    """Serve any ASGI app (e.g. a deliberately broken backend) on 127.0.0.1; returns its URL."""
    running: list[ServerThread] = []

    def start(app: ASGIApp) -> str:
        server = ServerThread(app)
        port = server.start()
        running.append(server)
        return f"http://127.0.0.1:{port}"

    yield start
    for server in running:
        server.stop()


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """The process's keyring replaced by a `MemoryKeyring` for one test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
