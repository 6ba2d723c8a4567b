"""The terminal driver's input thread sleeps while no key arrives (tui/textual_private/terminal.py).

Textual's own driver wakes ten times a second to poll stdin, and spins on a stdin at end of
file. Both are checked on the real `ito-tui demo` in tmux by counting what the kernel counts:
the process's context switches (every wake-up of every thread is one) and its CPU ticks. The
same measure is taken of Textual's stock driver (named through `TEXTUAL_DRIVER`) so that the
test shows it can see the polling it rules out.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .conftest import ITO_TUI, isolated_env
from .tmuxpane import TmuxPane

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"),
]

STOCK_DRIVER = "textual.drivers.linux_driver:LinuxDriver"
WINDOW_S = 2.0
"""Idle window over which wake-ups are counted; Textual's poll makes about 20 in it."""


def wakeups(pid: int) -> int:
    """Context switches of every thread of `pid` so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except FileNotFoundError:
            continue  # a thread that just ended
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def cpu_ticks(pid: int) -> int:
    """User and system CPU time of `pid` so far, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@contextmanager
def idle_demo(
    tmp_path: Path, *, stdin_eof: bool = False, driver: str | None = None
) -> Iterator[TmuxPane]:
    """`ito-tui demo` in tmux, on its booking picker, after its first load has settled."""
    env = isolated_env(tmp_path)
    pane_env = {k: env[k] for k in env if k in {"HOME", "TMPDIR", "LANG"} or k.startswith("XDG_")}
    if driver is not None:
        pane_env["TEXTUAL_DRIVER"] = driver
    command = [str(ITO_TUI), "demo"]
    if stdin_eof:
        command = ["sh", "-c", f"exec {shlex.join(command)} < /dev/null"]
    with TmuxPane(command, width=100, height=30, env=pane_env) as pane:
        pane.wait_for("Nodes (8)", timeout=30)  # the picker, with its first booking's detail
        time.sleep(1.0)  # the loading spinner and the first notifications have gone
        yield pane


def counted(pid: int, measure: Callable[[int], int]) -> int:
    """How much `measure` of `pid` grows over one idle window."""
    before = measure(pid)
    time.sleep(WINDOW_S)
    return measure(pid) - before


def test_idle_ito_tui_wakes_no_thread_where_textuals_driver_polls(tmp_path: Path) -> None:
    with idle_demo(tmp_path / "quiet") as quiet:
        quiet_wakeups = counted(quiet.pane_pid, wakeups)
    with idle_demo(tmp_path / "stock", driver=STOCK_DRIVER) as stock:
        stock_wakeups = counted(stock.pane_pid, wakeups)
    assert stock_wakeups >= 10, f"the measure misses Textual's 10 Hz poll ({stock_wakeups})"
    assert quiet_wakeups <= 3, f"{quiet_wakeups} wake-ups in {WINDOW_S} s of idle"


def test_keys_after_a_long_idle_and_a_lone_escape_still_work_and_ctrl_q_ends_it(
    tmp_path: Path,
) -> None:
    with idle_demo(tmp_path) as pane:
        pane.send("F1")
        pane.wait_for("Keys — Bookings", timeout=10)
        time.sleep(1.5)  # longer than the parser is ticked after input
        # A lone Escape is told from the start of a sequence only by a timeout: the thread
        # must tick the parser although no further byte arrives.
        pane.send("Escape")
        pane.wait_for(lambda s: "Keys — Bookings" not in s, timeout=5)
        pane.send("Down")
        pane.wait_for(lambda s: "bk_h200_2n_roce · ready" in s, timeout=5)
        pid = pane.pane_pid
        # Stopping the input thread wakes it through its pipe; without that it would sleep on.
        pane.send("C-q")
        pane.wait_for(lambda s: not os.path.exists(f"/proc/{pid}") or pane.dead, timeout=10)


@pytest.mark.parametrize("driver", [None, STOCK_DRIVER], ids=["ito", "textual-stock"])
def test_stdin_at_end_of_file_is_not_polled_in_a_loop(tmp_path: Path, driver: str | None) -> None:
    with idle_demo(tmp_path, stdin_eof=True, driver=driver) as pane:
        ticks = counted(pane.pane_pid, cpu_ticks)
    share = ticks / (WINDOW_S * os.sysconf("SC_CLK_TCK"))
    # Apart, so a loaded machine cannot put either on the wrong side: a spinning thread
    # got 25 % of a core beside a busy 2-core suite; an idle app takes next to nothing.
    if driver is None:
        assert share <= 0.05, f"{ticks} CPU ticks in {WINDOW_S} s with stdin at EOF"
    else:
        assert share >= 0.12, f"the measure misses the stock driver's spin ({ticks} ticks)"
