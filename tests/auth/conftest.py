"""Isolation for settings, keyring and log tests: private XDG dirs, no ITO_* from the host.

(`memory_keyring`, the one in-memory keyring, is the root conftest's.)"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("ITO_") or name == "PYTHON_KEYRING_BACKEND":
            monkeypatch.delenv(name)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    return tmp_path


@pytest.fixture
def use_keyring() -> Iterator[None]:
    """Restore whatever keyring backend a test sets."""
    previous = keyring.get_keyring()
    try:
        yield
    finally:
        keyring.set_keyring(previous)
