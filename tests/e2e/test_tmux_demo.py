"""The real app in tmux: `ito-tui demo --scenario showcase` driven only with send-keys and
read with capture-pane, from picking a booking to approving a restart and a completed run;
then the session ends and no process of it remains."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import shutil
import time
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.dom import DOMNode

import ito_tui.tui
from ito_tui.config import Settings

from .conftest import ITO_TUI, isolated_env, pids_with, wait_gone
from .tmuxpane import TmuxPane

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"),
]

SPEED = "100000"
"""Simulated seconds per wall second: the showcase's run completes in about ten seconds.
The demo's approval clock stays slow while the proposal waits, which costs nothing here
because the test approves at once."""

SWALLOWED = {"ctrl+a", "ctrl+b", "ctrl+s", "ctrl+j", "ctrl+enter"}
"""Keys that tmux (default prefix ctrl+b; screen-style ctrl+a) or terminals swallow."""

KEY_GAP_S = 0.15
"""Pause between keys: a burst of escape-sequence keys can arrive as one read and be
taken for an unknown sequence."""

PERCENT = re.compile(r"pretrain (\d+)%")


def keys(pane: TmuxPane, *names: str) -> None:
    """Send keys one at a time, as a person types them."""
    for name in names:
        pane.send(name)
        time.sleep(KEY_GAP_S)


def decide_later(pane: TmuxPane) -> None:
    """Leave the proposal whose modal is on screen for later: one Escape once the modal's
    grace is over, then wait until it has gone. (A second Escape sent on a screen capture
    taken before the modal closed would go to the run screen and leave it.)"""
    time.sleep(1.0)  # the modal ignores Decide later for its first half second
    keys(pane, "Escape")
    pane.wait_for(lambda s: "Decide later" not in s, timeout=15)


def showcase_pane(
    tmp_path: Path, speed: str, *, width: int = 80, height: int = 24
) -> tuple[TmuxPane, dict[str, str]]:
    """`ito-tui demo --scenario showcase` started in a tmux pane, and its environment."""
    env = isolated_env(tmp_path)
    pane_env = {k: env[k] for k in env if k in {"HOME", "TMPDIR", "LANG"} or k.startswith("XDG_")}
    command = [str(ITO_TUI), "demo", "--scenario", "showcase", "--speed", speed]
    return TmuxPane(command, width=width, height=height, env=pane_env).start(), env


def fill_the_spec(pane: TmuxPane) -> None:
    """On the booking picker: pick the highlighted (first ready) booking and fill its form
    by keys (Model size 8B, fineweb-edu, $30,000) until the pre-flight passes."""
    keys(pane, "Enter")
    pane.wait_for("Model size")
    time.sleep(0.5)
    keys(pane, "Tab")
    pane.type("catalog://fineweb-edu@1.3")
    time.sleep(KEY_GAP_S)
    keys(pane, "Tab", "Tab", "Tab")  # Data kind, Target: keep the defaults
    pane.type("30000")
    pane.wait_for("Pre-flight passed", timeout=20)


def showcase_run(tmp_path: Path, speed: str, *, width: int = 80, height: int = 24) -> TmuxPane:
    """`ito-tui demo --scenario showcase` in a tmux pane, a run submitted on its first
    booking by keys (8B, fineweb-edu, $30,000), the run screen opening."""
    pane, _ = showcase_pane(tmp_path, speed, width=width, height=height)
    try:
        pane.wait_for("bk_h100_8n_eth", timeout=30)
        fill_the_spec(pane)
        keys(pane, "C-g")
        pane.wait_for("Submit this training run?")
        keys(pane, "Enter")
        pane.wait_for("Nodes", timeout=20)  # the run screen's tab bar
    except BaseException:
        pane.kill()
        raise
    return pane


def title_progress(pane: TmuxPane, until: str, timeout: float = 30.0) -> list[str]:
    """Every distinct pane title seen until one contains `until`."""
    titles: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        title = pane.pane_title
        if not titles or titles[-1] != title:
            titles.append(title)
        if until in title:
            return titles
        time.sleep(0.05)
    raise AssertionError(f"no title with {until!r}; titles were {titles}")


@pytest.mark.parametrize(("width", "height"), [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_showcase_from_booking_to_completed_run_in_tmux(
    tmp_path: Path, width: int, height: int
) -> None:
    pane, env = showcase_pane(tmp_path, SPEED, width=width, height=height)
    try:
        # tmux runs with no config (-f /dev/null): its default prefix is in force.
        assert pane.tmux("show-options", "-gv", "prefix").strip() == "C-b"
        assert pane.fmt("#{window_width}x#{window_height}") == f"{width}x{height}"

        # The booking picker, on the simulator the demo started as its child.
        screen = pane.wait_for("bk_h100_8n_eth", timeout=30)
        assert "DEMO" in screen and "ready" in screen
        # The simulator's database lives in a fresh directory under our TMPDIR.
        demo_dirs = str(Path(env["TMPDIR"]) / "ito-demo-")
        sims = pids_with(demo_dirs)
        assert len(sims) == 1, f"expected one simulator child, found {sims}"
        app_pid = pane.pane_pid
        sim_cmdline = Path(f"/proc/{sims[0]}/cmdline").read_bytes().split(b"\0")
        assert b"ito_tui.desk_sim" in sim_cmdline and b"127.0.0.1" in sim_cmdline

        # Pick the highlighted (first ready) booking: the form opens on Model size, "8B".
        fill_the_spec(pane)

        # Submit: ctrl+g opens the confirmation, Enter confirms (its default button).
        keys(pane, "C-g")
        pane.wait_for("Submit this training run?")
        assert not pane.bell_flag, "nothing should have rung the bell yet"
        keys(pane, "Enter")

        # Stages advance, visible in the terminal title through tmux, until the proposal.
        titles = title_progress(pane, "NEEDS APPROVAL")
        running = [t for t in titles if t.startswith("ito · run_")]
        assert running, titles
        progress = [int(m.group(1)) for t in running if (m := PERCENT.search(t))]
        assert len(set(progress)) >= 2 and progress == sorted(progress), titles

        # The proposal: the bell reached tmux, and the modal shows what it would do.
        screen = pane.wait_for("NEEDS APPROVAL")
        deadline = time.monotonic() + 5
        while not pane.bell_flag:
            assert time.monotonic() < deadline, "the proposal's bell never reached tmux"
            time.sleep(0.05)
        assert "PAUSED" in screen and "Roll back" in screen

        # Approve deliberately: move to "Approve restart…", press it, type the word, confirm.
        keys(pane, "Tab", "Tab", "Enter")
        pane.wait_for("type approve")
        pane.type("approve")
        time.sleep(KEY_GAP_S)
        keys(pane, "Enter")
        pane.wait_for("EXECUTED", timeout=20)

        # The run completes; the title says so, and behind the closed modal every stage
        # that ran shows its gate passed.
        titles = title_progress(pane, "completed", timeout=40)
        assert titles[-1].startswith("ito · run_"), titles
        keys(pane, "Escape")
        screen = pane.wait_for(lambda s: "EXECUTED" not in s and "ENDED: completed" in s)
        for stage in ("data prep", "pretrain", "mid-train"):
            assert re.search(rf"✓ {stage}\s+passed", screen), screen

        # Ending the tmux session ends the app and its simulator: no stray process.
        pane.tmux("kill-session", "-t", pane.session)
        left = wait_gone([app_pid, *sims], timeout=10)
        assert left == [], f"still running after the tmux session ended: {left}"
        assert pids_with(demo_dirs) == []
        assert list(Path(env["TMPDIR"]).glob("ito-demo-*")) == [], "demo workdir left behind"
    finally:
        pane.kill()


def _ito_tui_classes() -> list[type[DOMNode]]:
    """Every screen, widget and the app defined anywhere under ito_tui.tui."""
    found: dict[str, type[DOMNode]] = {}
    for info in pkgutil.walk_packages(ito_tui.tui.__path__, "ito_tui.tui."):
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, DOMNode) and obj.__module__.startswith("ito_tui."):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(found.values())


def test_no_default_key_is_one_that_tmux_or_terminals_swallow() -> None:
    classes = _ito_tui_classes()
    assert len(classes) > 10, "the walk found too few classes to mean anything"
    offending = []
    seen = 0
    for cls in classes:
        for binding in cls.__dict__.get("BINDINGS", []):  # its own, not Textual's
            if not isinstance(binding, Binding):
                binding = Binding(*binding)
            seen += 1
            for key in binding.key.split(","):
                if key.strip().lower() in SWALLOWED:
                    offending.append(f"{cls.__module__}.{cls.__qualname__}: {binding.key}")
    # The user's keymap starts empty: nothing re-binds a default onto a swallowed key.
    assert Settings().keymap == {}
    assert seen > 20, f"only {seen} bindings found"
    assert offending == []
