"""The real app in tmux at 80x24, by keyboard only (issue 19's "done means"): on the demo's
showcase run the operator approves the loss spike's rollback, opens the loss chart (`i`),
moves the cursor onto the spike and reads its exact step and value, zooms in and sees the
rollback drawn, then overlays the demo's previous happy run (`c`) by tokens seen and sees
where the two curves part (the readout's difference)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from .test_tmux_demo import keys, showcase_run
from .tmuxpane import TmuxPane

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"),
]

SPEED = "100000"
"""Simulated seconds per wall second: the run ends some ten seconds after the approval
(the demo's approval clock stays slow while the proposal waits), so the plot holds still
while the cursor walks it."""

READOUT = re.compile(r"step ([\d,]+) · loss ([\d.]+)")
PLOT_COLUMNS = 70
"""About the plot's width at 80 columns (the y axis takes the rest)."""
BUCKET = re.compile(r"bucket ([\d.]+) – ([\d.]+)")


def readout(screen: str) -> tuple[int, float, float]:
    """The cursor's step and value and its bucket's max, from the inspector's two top rows."""
    top = "\n".join(screen.splitlines()[1:3])
    found, bucket = READOUT.search(top), BUCKET.search(top)
    assert found and bucket, f"no readout in:\n{screen}"
    return int(found[1].replace(",", "")), float(found[2]), float(bucket[2])


def approve_the_rollback(pane: TmuxPane) -> None:
    pane.wait_for("Approve restart", timeout=120)
    time.sleep(1.0)  # the modal ignores keys that came with it (its grace)
    keys(pane, "Tab", "Tab", "Enter")
    pane.wait_for("type approve")
    pane.type("approve")
    keys(pane, "Enter")
    pane.wait_for(lambda s: "APPROVED" in s.upper() and "Approve restart" not in s, timeout=20)
    keys(pane, "Escape")
    pane.wait_for(lambda s: "↶" in s and "Decide later" not in s, timeout=60)  # the rewind


@pytest.mark.long(seconds=30)
def test_inspect_the_spike_zoom_onto_the_rollback_and_overlay_the_happy_run(
    tmp_path: Path,
) -> None:
    pane = showcase_run(tmp_path, SPEED)
    try:
        approve_the_rollback(pane)
        pane.wait_for(lambda s: "completed" in s.splitlines()[1], timeout=90)  # the run strip
        keys(pane, "i")
        screen = pane.wait_for(lambda s: "loss · x: step" in s and "fetching" not in s)
        # Walk the cursor back column by column to the spike: the column whose bucket
        # holds the largest loss since the run settled (its mark says rewind or fault).
        seen: list[tuple[int, float, float]] = []
        for _ in range(PLOT_COLUMNS):
            keys(pane, "Left")
            seen.append(readout(pane.screen()))
        settled = seen[: len(seen) // 2]  # the newer half: the first steps' loss is higher
        step, _value, high = max(settled, key=lambda r: r[2])
        assert high > min(r[1] for r in settled) + 0.2  # 2.6 over a settled 2.2
        # Back onto it, then zoom in twice around it: the step under the cursor stays.
        for _ in range(PLOT_COLUMNS):
            if readout(pane.screen())[0] == step:
                break
            keys(pane, "Right")
        assert readout(pane.screen())[0] == step
        for _ in range(2):
            keys(pane, "plus")
            screen = pane.wait_for(lambda s: "fetching" not in s, timeout=20)
        near, value, _ = readout(screen)
        assert abs(near - step) < 5_000, screen
        marks = next(line for line in screen.splitlines() if line.lstrip().startswith("marks"))
        assert "↶" in marks, screen  # the rollback, drawn where it happened
        assert value > 0

        # The previous happy run as the reference, by tokens seen.
        keys(pane, "Escape", "c")
        pane.wait_for("none: this run alone")
        pane.type("completed")
        keys(pane, "Enter")
        pane.wait_for("(by tokens)", timeout=20)  # the Telemetry caption's legend
        keys(pane, "i")
        pane.wait_for(lambda s: "ref run_" in s and "fetching" not in s)
        keys(pane, "x")  # step -> tokens seen, the reference's alignment
        screen = pane.wait_for(lambda s: "x: tokens" in s and "fetching" not in s)
        assert "Δ" in "\n".join(screen.splitlines()[1:3]), screen  # both values, and by how much
    finally:
        pane.kill()
