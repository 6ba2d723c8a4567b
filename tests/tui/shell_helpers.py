"""Helpers for the shell's tests: isolated user dirs, settings without the environment, waits."""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from textual.pilot import Pilot

from ito_tui.config import Settings


class MemoryKeyring(KeyringBackend):
    """A keyring that lives in a dict: what the login flow stores can be read back."""

    priority = 1  # type: ignore[assignment]  # keyring declares it as a classproperty

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads the real config, themes, logs or token."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("ITO_TOKEN", raising=False)
    monkeypatch.setenv("ITO_CONFIG_FILE", str(tmp_path / "absent.toml"))
    yield


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """The process's keyring replaced by a MemoryKeyring for one test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def settings(**values: Any) -> Settings:
    """Settings with defaults and `values` only: no file, no ITO_* environment."""
    return Settings(**values, fields_set=frozenset(values))


async def wait_for(
    pilot: Pilot[Any], predicate: Callable[[], object], within: float = 10.0, what: str = ""
) -> None:
    """Let the app run until `predicate()` is true; fail after `within` seconds."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)
    await pilot.pause()


def screen_text(pilot: Pilot[Any]) -> str:
    """Everything on screen as plain text (for asserting what a person would read)."""
    svg = pilot.app.export_screenshot()
    pieces = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(pieces)).replace("\xa0", " ")


async def settle(seconds: float = 0.1) -> None:
    await asyncio.sleep(seconds)
