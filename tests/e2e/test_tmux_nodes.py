"""The real app in tmux: `ito-tui demo --scenario showcase` at 80x24, the Nodes tab (5)
showing the straggler coming (`1 straggler` in its status line, `▲ straggler` in its row),
the node failing and the spare node joining (`↻ replaced`, with the failed node's Xid),
by keyboard only (issue 18's "done means")."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .test_tmux_demo import decide_later, keys, showcase_run

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"),
]

SPEED = "10000"
"""Simulated seconds per wall second: the showcase's straggler shows for some fifteen
seconds (the Nodes tab refreshes every 5 s, and at once on a fleet event), then fails."""


@pytest.mark.long(seconds=19)
def test_the_nodes_tab_shows_the_straggler_coming_the_failure_and_the_spare(
    tmp_path: Path,
) -> None:
    pane = showcase_run(tmp_path, SPEED)
    try:
        keys(pane, "5")
        pane.wait_for(lambda s: "✓ healthy" in s and "quorum" in s, timeout=60)

        # The status line (`8 nodes: 1 straggler, 7 healthy · …`) stays readable while an
        # alert's toast covers the rows at 80 columns; the rows say it with glyph and word.
        # At this speed the failed node is replaced within a refresh or two: `1 failed`
        # may come and go between two looks, the replaced row keeps its Xid.
        seen: list[str] = []
        deadline = time.monotonic() + 90
        for words in (("1 straggler",), ("1 failed", "1 replaced"), ("1 replaced",)):
            screen = pane.screen()
            while not any(w in screen for w in words):
                assert time.monotonic() < deadline, f"no {words} in the Nodes tab:\n{screen}"
                if "Decide later" in screen:  # the proposal's modal: left for later
                    decide_later(pane)
                    keys(pane, "5")
                time.sleep(0.2)
                screen = pane.screen()
            seen += [w for w in words if w in screen]
        assert seen[0] == "1 straggler" and seen[-1] == "1 replaced"
        screen = pane.wait_for(lambda s: "↻ replaced" in s, timeout=20)
        assert "xid 1" in screen  # where the failed node's GPUs were: its Xid error
    finally:
        pane.kill()
