"""Desktop notifications through nested tmux: `ito-tui demo` in an inner tmux whose client
runs in an outer tmux pane, recorded with `pipe-pane` (what the outer terminal receives).

With `allow-passthrough on` the inner tmux unwraps the demo's `\\ePtmux;…\\e\\\\` and the
OSC 9 (or 777) notification reaches the outer terminal exactly once when the showcase's
loss-spike proposal arrives; the alert command runs once for it too. With passthrough
off tmux drops the sequence whole: nothing of it reaches either terminal or screen.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ITO_TUI, isolated_env, pids_with, wait_gone
from .tmuxpane import TmuxPane

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"),
]

SPEED = "100000"
KEY_GAP_S = 0.15
RECORDER = """\
import pathlib, sys, uuid
out = pathlib.Path(sys.argv[1])
(out / f"{uuid.uuid4().hex}.json").write_bytes(sys.stdin.buffer.read())
"""


class Inner:
    """The inner tmux server (its own socket): keys in, screen out."""

    def __init__(self) -> None:
        self.socket = f"ito-e2e-inner-{uuid.uuid4().hex[:8]}"
        self.session = "inner"

    def tmux(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check
        )
        return out.stdout

    def up(self) -> bool:
        return (
            subprocess.run(
                ["tmux", "-L", self.socket, "has-session", "-t", self.session],
                capture_output=True,
                check=False,
            ).returncode
            == 0
        )

    def keys(self, *names: str) -> None:
        for name in names:
            self.tmux("send-keys", "-t", self.session, name)
            time.sleep(KEY_GAP_S)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.session, "-l", text)
        time.sleep(KEY_GAP_S)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {text!r}; screen was:\n{screen}")

    def kill(self) -> None:
        self.tmux("kill-server", check=False)


@pytest.fixture
def nested() -> Iterator[tuple[list[TmuxPane], Inner]]:
    """The outer panes (started by `start_nested`) and the inner server; both torn down."""
    panes: list[TmuxPane] = []
    inner = Inner()
    try:
        yield panes, inner
    finally:
        inner.kill()
        for pane in panes:
            pane.kill()


def start_nested(
    tmp_path: Path, panes: list[TmuxPane], inner: Inner, *, passthrough: bool, env: dict[str, str]
) -> tuple[TmuxPane, Path]:
    """The outer pane runs the inner tmux's client; its output is piped to a file."""
    conf = tmp_path / "inner.conf"
    conf.write_text(f"set -g allow-passthrough {'on' if passthrough else 'off'}\n")
    demo = shlex.join([str(ITO_TUI), "demo", "--scenario", "showcase", "--speed", SPEED])
    launcher = tmp_path / "inner.sh"
    launcher.write_text(
        "unset TMUX\n"  # the outer tmux set it: a nested client refuses to start otherwise
        f"exec tmux -L {inner.socket} -f {shlex.quote(str(conf))} "
        f"new-session -s {inner.session} {shlex.quote(demo)}\n",
        encoding="utf-8",
    )
    outer = TmuxPane(["sh", str(launcher)], width=100, height=30, env=env)
    panes.append(outer)
    outer.start()
    recorded = tmp_path / "outer-pane.bin"
    outer.tmux("pipe-pane", "-o", "-t", outer.session, f"cat >> {shlex.quote(str(recorded))}")
    deadline = time.monotonic() + 20
    while not inner.up():
        assert time.monotonic() < deadline, "the inner tmux never started"
        time.sleep(0.1)
    return outer, recorded


def wait_recorded(recorded: Path, sequence: str, timeout: float) -> None:
    """Until the outer terminal has received `sequence` (or the timeout ends)."""
    deadline = time.monotonic() + timeout
    while sequence not in recorded.read_bytes().decode("utf-8", "replace"):
        if time.monotonic() > deadline:
            return  # the caller's assertions say what was received instead
        time.sleep(0.2)


def submit_showcase(inner: Inner) -> None:
    """From the booking picker to a submitted run, as test_tmux_demo types it."""
    inner.wait_for("bk_h100_8n_eth", timeout=30)
    inner.keys("Enter")
    inner.wait_for("Model size")
    time.sleep(0.5)
    inner.keys("Tab")
    inner.type("catalog://fineweb-edu@1.3")
    inner.keys("Tab", "Tab", "Tab")
    inner.type("30000")
    inner.wait_for("Pre-flight passed", timeout=20)
    inner.keys("C-g")
    inner.wait_for("Submit this training run?")
    inner.keys("Enter")


def pane_env(tmp_path: Path, **extra: str) -> tuple[dict[str, str], dict[str, str]]:
    env = isolated_env(tmp_path, **extra)
    keep = {"HOME", "TMPDIR", "LANG"}
    exported = {k: env[k] for k in env if k in keep or k.startswith(("XDG_", "ITO_"))}
    return env, exported


@pytest.mark.parametrize(
    ("mode", "sequence"),
    [("osc9", "\x1b]9;ito: Needs approval: run_"), ("osc777", "\x1b]777;notify;ito: Needs")],
)
def test_the_proposal_reaches_the_outer_terminal_once_through_passthrough(
    tmp_path: Path, nested: tuple[list[TmuxPane], Inner], mode: str, sequence: str
) -> None:
    panes, inner = nested
    hook_out = tmp_path / "hook-out"
    hook_out.mkdir()
    script = tmp_path / "record.py"
    script.write_text(RECORDER, encoding="utf-8")
    command = json.dumps([sys.executable, str(script), str(hook_out)])
    env, exported = pane_env(tmp_path, ITO_ALERTS__DESKTOP=mode, ITO_ALERTS__COMMAND=command)
    outer, recorded = start_nested(tmp_path, panes, inner, passthrough=True, env=exported)
    submit_showcase(inner)
    screen = inner.wait_for("NEEDS APPROVAL", timeout=40)
    assert "Roll back" in screen  # the proposal's modal: the pipeline opened it
    # The pipeline sends it as the proposal arrives; on a loaded machine the pipeline can
    # attach after that (it then only shows the modal) and the watcher's next poll (10 s)
    # sends it: wait for the first, then give the other source time to send it again.
    wait_recorded(recorded, sequence, timeout=30)
    deadline = time.monotonic() + 15  # the alert command: a Python that starts, loaded
    while not list(hook_out.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.5)
    raw = recorded.read_bytes().decode("utf-8", "replace")
    shown = [chunk for chunk in raw.split("\x07") if "Needs approval" in chunk]
    assert raw.count(sequence) == 1, shown
    # Unwrapped by the inner tmux: the outer terminal gets the plain sequence.
    assert "\x1bPtmux;" not in raw
    if mode == "osc9":
        line = raw[raw.index(sequence) :].split("\x07", 1)[0]
        assert line.endswith(" UTC") and ", pretrain, expires " in line, line
    # The alert command ran once for it, with the alert as JSON.
    bodies = [json.loads(p.read_text()) for p in hook_out.glob("*.json")]
    proposals = [b for b in bodies if b["kind"] == "proposal"]
    assert len(proposals) == 1 and proposals[0]["run_id"].startswith("run_"), bodies
    # Nothing of any sequence is drawn on either screen.
    for text in (inner.screen(), outer.screen()):
        assert "tmux;" not in text and "]9;" not in text and "777;" not in text
    inner.kill()
    demo_dirs = str(Path(env["TMPDIR"]) / "ito-demo-")
    assert wait_gone(pids_with(demo_dirs), timeout=10) == []


def test_with_passthrough_off_nothing_raw_reaches_a_screen(
    tmp_path: Path, nested: tuple[list[TmuxPane], Inner]
) -> None:
    panes, inner = nested
    env, exported = pane_env(tmp_path, ITO_ALERTS__DESKTOP="osc777")
    outer, recorded = start_nested(tmp_path, panes, inner, passthrough=False, env=exported)
    submit_showcase(inner)
    inner.wait_for("NEEDS APPROVAL", timeout=40)
    time.sleep(1.5)
    raw = recorded.read_bytes().decode("utf-8", "replace")
    assert "777;notify" not in raw and "tmux;" not in raw
    for text in (inner.screen(), outer.screen()):
        assert "tmux;" not in text and "777;" not in text and "notify;" not in text
    inner.kill()
    demo_dirs = str(Path(env["TMPDIR"]) / "ito-demo-")
    assert wait_gone(pids_with(demo_dirs), timeout=10) == []
