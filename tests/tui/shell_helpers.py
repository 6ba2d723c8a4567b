"""Helpers for the shell's tests: isolated user dirs, plain text of the screen; and, from
`tests.support`, settings without the environment and the one `wait_for`."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.support.apps import settings
from tests.support.isolation import isolate_user_dirs
from tests.support.waiting import wait_for

__all__ = ["isolated_user_dirs", "screen_text", "settings", "wait_for"]


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads the real config, themes, logs or token."""
    isolate_user_dirs(tmp_path, monkeypatch)
    yield


def screen_text(pilot: Pilot[Any]) -> str:
    """Everything on screen as plain text (for asserting what a person would read)."""
    svg = pilot.app.export_screenshot()
    pieces = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(pieces)).replace("\xa0", " ")
