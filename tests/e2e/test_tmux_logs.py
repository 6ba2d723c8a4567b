"""The real app in tmux: `ito-tui demo --scenario showcase`, from a submitted run to its node
failure in the checkpoints & faults timeline, and Enter on it to the job log's NCCL
watchdog timeouts at the fault, by keyboard at 80x24 (issue 18's "done means")."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from .test_tmux_demo import decide_later, keys, showcase_run

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"),
]

SPEED = "20000"
"""Simulated seconds per wall second: the showcase's node fails some ten seconds in."""
NCCL_ROW = re.compile(r"r\d+ E +nccl +\[rank\d+\]:\[E\d{4}")
"""A Logs row of a rank's NCCL watchdog error (`18:41:05   r3 E nccl  [rank3]:[E1204 …`)."""
FOLLOWING = re.compile(r"following · from \w{3} \d+ \d\d:\d\d UTC · filter: all")
"""The caption following again, the top row's day named (the demo's clock is days ahead)."""


@pytest.mark.long(seconds=16)
def test_enter_on_the_showcase_fault_opens_the_job_log_at_its_nccl_timeouts(
    tmp_path: Path,
) -> None:
    pane = showcase_run(tmp_path, SPEED)
    try:
        # 2: the checkpoints & faults timeline takes the keys; wait for the node failure
        # (a proposal that comes first is left for later: Escape).
        keys(pane, "2")
        deadline = time.monotonic() + 60
        while "node_failure on" not in (screen := pane.screen()):
            assert time.monotonic() < deadline, f"no node failure in the timeline:\n{screen}"
            if "Decide later" in screen:
                decide_later(pane)
            time.sleep(0.2)
        if "Decide later" in pane.screen():
            decide_later(pane)
        keys(pane, "Enter")

        # The Logs tab, paused at the fault, its ranks' NCCL timeouts on screen (the loss
        # spike's proposal may open over it on a slow machine: left for later again).
        deadline = time.monotonic() + 20
        while True:
            screen = pane.screen()
            if "Decide later" in screen:
                decide_later(pane)
            elif "at fault" in screen and NCCL_ROW.search(screen):
                break
            assert time.monotonic() < deadline, f"no NCCL timeouts at the fault:\n{screen}"
            time.sleep(0.2)
        assert "end Follow" in screen
        # End follows the newest lines again, and says so (with the day of the top row:
        # the demo's clock runs days ahead of today's).
        keys(pane, "End")
        deadline = time.monotonic() + 10
        while not FOLLOWING.search(screen := pane.screen()):
            assert time.monotonic() < deadline, f"not following again:\n{screen}"
            if "Decide later" in screen:
                decide_later(pane)
            time.sleep(0.2)
    finally:
        pane.kill()
