"""Cyclic GC is paused while a command loads and always comes back on (ito_tui/startup.py)."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

from ito_tui import cli, startup


@pytest.fixture(autouse=True)
def gc_restored() -> Iterator[None]:
    """Whatever a test does, the process leaves it with collection on and no timer."""
    yield
    startup.resume()
    gc.enable()


def test_pause_turns_collection_off_and_resume_freezes_and_turns_it_on() -> None:
    assert gc.isenabled()
    startup.pause()
    assert not gc.isenabled()
    startup.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0, "the start-up heap is in the permanent generation"
    startup.resume()  # idempotent
    assert gc.isenabled()


def test_pause_leaves_collection_alone_when_someone_else_turned_it_off() -> None:
    gc.disable()
    startup.pause()
    startup.resume()
    assert not gc.isenabled(), "resume() only undoes its own pause()"


def test_collection_comes_back_by_itself_if_nothing_resumes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(startup, "RESUME_AFTER_S", 0.05)
    startup.pause()
    assert not gc.isenabled()
    deadline = time.monotonic() + 10
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gc.isenabled(), "a long-running command (serve, backend, --watch) collects again"


@pytest.mark.parametrize("argv", [["--version"], ["--no-such-flag"], ["completion", "bash"]])
def test_main_returns_with_collection_on(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[bool] = []
    original = cli._main

    def spy(args: list[str]) -> int:
        seen.append(gc.isenabled())
        return original(args)

    monkeypatch.setattr(cli, "_main", spy)
    cli.main(argv)
    assert seen == [False], "the command loaded with collection paused"
    assert gc.isenabled()
