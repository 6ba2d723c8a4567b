"""Fixtures of the fault tests: isolated user dirs, and desk_sim behind a tampering layer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ito_tui.desk_sim import SimConfig, create_app
from tests.support.isolation import isolate_user_dirs
from tests.support.servers import sim_config

from .tamper import Tamper


@dataclass
class Tampered:
    """desk_sim behind `Tamper`, served on 127.0.0.1: `url`, `tamper`, `config`."""

    url: str
    tamper: Tamper
    config: SimConfig


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No fault test reads or writes the real config, data, logs or token."""
    isolate_user_dirs(tmp_path, monkeypatch)
    yield


@pytest.fixture
def tampered(tmp_path: Path, serve_asgi: Callable[[Any], str]) -> Callable[..., Tampered]:
    """Start desk_sim (SimConfig overrides) behind a fresh `Tamper`."""
    count = 0

    def start(**overrides: Any) -> Tampered:
        nonlocal count
        count += 1
        config = sim_config(tmp_path / f"tampered-{count}.db", **overrides)
        tamper = Tamper(create_app(config))
        return Tampered(url=serve_asgi(tamper), tamper=tamper, config=config)

    return start
