"""Shared fixtures: a real simulated backend on 127.0.0.1 with an ephemeral port."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp

from ito_tui.desk_sim import SimConfig, create_app

TOKENS = {"s3cret": "alice", "hunter2": "bob"}
FAST_SPEED = 1_000_000.0
"""Simulated seconds per wall second in tests: the reference run takes about a second."""


@dataclass
class SimHandle:
    """A running simulated backend: `url`, alice's `token`, all `tokens`, the `config`."""

    url: str
    config: SimConfig
    app: FastAPI
    token: str = "s3cret"
    operator: str = "alice"
    tokens: dict[str, str] = field(default_factory=lambda: dict(TOKENS))

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}


class ServerThread:
    """uvicorn serving one app in a background thread with its own event loop."""

    def __init__(self, app: ASGIApp) -> None:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        # Signal handlers only work in the main thread; the test owns the lifetime.
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def start(self) -> int:
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                return int(self.server.servers[0].sockets[0].getsockname()[1])
            if not self.thread.is_alive():
                break
            self.thread.join(0.01)
        raise RuntimeError("the simulated backend did not start")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def sim_config(db_path: Path, **overrides: Any) -> SimConfig:
    """The simulator as tests run it: fast, the happy scenario, `TOKENS`, 1 s heartbeats."""
    base = SimConfig(
        db_path=db_path,
        speed=FAST_SPEED,
        scenario="happy",
        tokens=dict(TOKENS),
        heartbeat_s=1.0,
        tick_s=0.02,
    )
    return replace(base, **overrides)


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
