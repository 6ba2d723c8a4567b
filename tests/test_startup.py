"""Cyclic GC is paused while a command loads and always comes back on (ito_tui/startup.py)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
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


def test_pause_turns_collection_off_and_resume_turns_it_on() -> None:
    assert gc.isenabled()
    startup.pause()
    assert not gc.isenabled()
    startup.resume()
    assert gc.isenabled()
    startup.resume()  # idempotent
    assert gc.isenabled()


def test_resume_freezes_the_start_up_heap_and_sets_the_thresholds_that_let_rows_die_young() -> None:
    # In a fresh interpreter: this one's start-up may be over (resumed) already, and the
    # suite froze its own heap (tests/conftest.py).
    code = (
        "import gc, json; from ito_tui import startup; before = gc.get_threshold(); "
        "frozen = gc.get_freeze_count(); startup.pause(); startup.resume(); "
        "print(json.dumps([before, gc.get_threshold(), frozen, gc.get_freeze_count()]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    before, after, frozen_before, frozen_after = json.loads(run.stdout)
    assert before == [700, 10, 10]  # CPython's own, so the change below is ours
    assert tuple(after) == startup.THRESHOLDS
    assert frozen_before == 0
    assert frozen_after > 0, "the start-up heap is in the permanent generation"


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
    original = cli.dispatch

    def spy(args: list[str]) -> int:
        seen.append(gc.isenabled())
        return original(args)

    monkeypatch.setattr(cli, "dispatch", spy)
    cli.main(argv)
    assert seen == [False], "the command loaded with collection paused"
    assert gc.isenabled()


_SCAN = """
import sys
opened = []
sys.addaudithook(
    lambda event, args: event == "open"
    and str(args[0]).endswith("entry_points.txt")
    and opened.append(args[0])
)
from ito_tui import cli
cli.main(["--version"])
from pydantic import BaseModel
class M(BaseModel):
    x: int
M(x=1)
print("SCANNED", len(opened))
"""


@pytest.mark.parametrize(("setting", "scans"), [(None, False), ("some_plugin", True)])
def test_pydantic_does_not_scan_for_plugins_unless_the_user_says(
    setting: str | None, scans: bool
) -> None:
    # Issue 8 #2b: pydantic's first model otherwise reads every installed distribution's
    # entry points (~6 ms); a value the user set (here: disable one plugin) is kept.
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    out = subprocess.run(
        [sys.executable, "-c", _SCAN], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    scanned = int(out.stdout.split("SCANNED ")[1])
    assert (scanned > 0) is scans
