"""`watch --alert-command` flags a silent run as the TUI does: progress stops on every
rank (an NCCL hang) while the stream goes on, and the command runs once for it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.alerting.live import BOOKINGS, connect, hang_pretrain, start_run

ITO_TUI = Path(sys.executable).parent / "ito-tui"
RECORD = "import sys\nopen(sys.argv[1], 'a').write(sys.stdin.read() + '\\n')\n"

pytestmark = [pytest.mark.faults, pytest.mark.slow]


@pytest.mark.long(seconds=24)
async def test_a_run_that_hangs_while_watched_runs_the_command_once_for_its_silence(
    tampered: Callable[..., Any], tmp_path: Path
) -> None:
    # Pretrain's hang must outlast the silence's floor of 2 local seconds, whenever the
    # watcher starts: with 3B tokens it lasted ~2.4 s, and a watcher slow to start on a
    # loaded machine saw too little of it; with 6B at 1,000x ~7 s, and a whole-suite run
    # on 2 cores still saw none of it. At 500x it lasts ~14 s (and the run ~24 s).
    sim = tampered(scenario="happy", speed=500.0)
    sim.tamper.event_hook(hang_pretrain(after=3))
    async with connect(sim.url, "s3cret") as alice:
        run_id = await start_run(alice, BOOKINGS[0], "happy", tokens=6_000_000_000)
    record, out = tmp_path / "record.py", tmp_path / "alerts.jsonl"
    record.write_text(RECORD, encoding="utf-8")
    env = {**os.environ, "ITO_TOKEN": "s3cret", "ITO_BACKEND_URL": sim.url}
    argv = [str(ITO_TUI), "watch", run_id, "--alert-command", sys.executable]
    argv += ["--alert-arg", str(record), "--alert-arg", str(out)]
    run = {"env": env, "capture_output": True, "text": True, "timeout": 120}
    done = await asyncio.to_thread(subprocess.run, argv, **run)
    assert done.returncode == 0, done.stderr[-2000:]
    alerts = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    silent = [a for a in alerts if a["kind"] == "silent"]
    assert [(a["run_id"], a["stage"]) for a in silent] == [(run_id, "pretrain")]
    assert silent[0]["summary"] == (
        f"{run_id}: no progress for 10m00s while the backend is connected; "
        "it has not reported a fault."
    )
    assert alerts[-1]["kind"] == "run_end"
