"""A simulated backend (desk_sim) or any ASGI app served on 127.0.0.1 with an ephemeral port.

The root conftest's fixtures (`sim_factory`, `sim`, `serve_asgi`) start them; tests that
build their own (`sim_config`, `ServerThread`) import them from here.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp

from ito_tui.desk_sim import SimConfig

__all__ = ["FAST_SPEED", "TOKENS", "ServerThread", "SimHandle", "sim_config"]

TOKENS = {"s3cret": "alice", "hunter2": "bob"}
START_S = 30.0
"""How long `ServerThread.start` waits for uvicorn to listen."""
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
        # uvicorn installs no signal handlers off the main thread: the test owns the lifetime.
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def start(self) -> int:
        """Start serving; the port. A bound of START_S, not a timing: a loaded machine (four
        workers on two cores, a wheel being built beside) has been seen to take over 5 s."""
        self.thread.start()
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.server.started:
                return int(self.server.servers[0].sockets[0].getsockname()[1])
            if not self.thread.is_alive():
                break
            self.thread.join(0.01)
        others = sorted(t.name for t in threading.enumerate())
        raise RuntimeError(
            f"the simulated backend did not start in {START_S:.0f} s; threads: {others}"
        )

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
