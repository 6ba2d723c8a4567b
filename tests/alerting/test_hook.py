"""The command hook with real programs: stdin JSON, timeouts, failures, floods, bursts."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tracemalloc
from pathlib import Path

import pytest

from ito_tui.alerting import Alert, CommandHook
from ito_tui.textsafe import one_line

RUN = "run_7f3a"


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


def an_alert(kind: str = "proposal", seq: int = 1) -> Alert:
    return Alert(kind, RUN, "Needs approval", f"{RUN}: alert {seq}", seq=seq, stage="pretrain")  # type: ignore[arg-type]


def gone(pid: int) -> bool:
    """The process no longer runs (a zombie nobody reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def test_the_alert_reaches_stdin_as_json(tmp_path: Path) -> None:
    out = tmp_path / "stdin.json"
    hook = CommandHook([str(script(tmp_path / "record", f'cat > "{out}"\n')), "--flag"])
    alert = an_alert()
    hook.submit(alert)
    await hook.drain(10)
    assert json.loads(out.read_text()) == alert.to_json()
    assert (hook.delivered, hook.failed, hook.timed_out, hook.coalesced) == (1, 0, 0, 0)


def named(path: Path) -> str:
    """How a failure names a command: its argv[0], cut at 80 characters (pytest's tmp paths
    under xdist pass that once its run counter has four digits)."""
    return one_line(str(path), max_len=80)


async def test_a_command_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    sleeper = script(tmp_path / "sleeper", f'sleep 60 &\necho "$$ $!" > "{pids}"\nwait\n')
    failures: list[str] = []
    # 1.5 s: a loaded machine starts the script (and writes its pids) well within it.
    hook = CommandHook([str(sleeper)], timeout_s=1.5, on_failure=failures.append)
    hook.submit(an_alert())
    await hook.drain(10)
    leader, child = (int(p) for p in pids.read_text().split())
    for _ in range(50):  # SIGKILL lands at once, but the kernel may take a moment to end them
        if gone(leader) and gone(child):
            break
        await asyncio.sleep(0.1)
    assert gone(leader) and gone(child)
    assert (hook.timed_out, hook.delivered) == (1, 0)
    # The command is named as the hook names it: cut at 80 characters (a deep tmp path is).
    assert failures == [f"alert command {named(sleeper)!r} timed out after 1.5 s and was killed"]


async def test_failures_are_logged_each_time_and_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    failing = script(tmp_path / "failing", 'cat >/dev/null\necho "no webhook URL" >&2\nexit 3\n')
    failures: list[str] = []
    hook = CommandHook([str(failing)], on_failure=failures.append)
    with caplog.at_level(logging.WARNING, logger="ito_tui"):
        for kind in ("proposal", "gate_failed", "slo"):
            hook.submit(an_alert(kind))
        await hook.drain(10)
        missing = CommandHook([str(tmp_path / "nowhere")], on_failure=failures.append)
        missing.submit(an_alert())
        await missing.drain(10)
    assert hook.failed == 3 and missing.failed == 1
    assert failures == [
        f"alert command {named(failing)!r} exited 3: no webhook URL",
        f"alert command {named(tmp_path / 'nowhere')!r} not found",
    ]
    assert sum("exited 3: no webhook URL" in r.getMessage() for r in caplog.records) == 3


async def test_a_flood_on_stdout_neither_blocks_nor_grows_memory(tmp_path: Path) -> None:
    # 64 MiB through the pipe: far past its buffer (a writer would block unread) and far
    # past what a hook may keep.
    flood = script(
        tmp_path / "flood", "head -c 67108864 /dev/zero\nhead -c 67108864 /dev/zero >&2\n"
    )
    hook = CommandHook([str(flood)], timeout_s=60)
    tracemalloc.start()
    try:
        hook.submit(an_alert())
        await hook.drain(60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert hook.delivered == 1
    assert peak < 4 * 1024 * 1024, peak


async def test_a_burst_is_bounded_and_every_alert_is_counted(tmp_path: Path) -> None:
    log = tmp_path / "log"
    seen = tmp_path / "seen"
    seen.mkdir()
    # Each run logs its start and end (small O_APPEND writes: atomic) and keeps its stdin.
    recorder = script(
        tmp_path / "recorder",
        f'echo "start $$" >> "{log}"\ncat > "{seen}/$$.json"\n'
        f'sleep 0.05\necho "end $$" >> "{log}"\n',
    )
    hook = CommandHook([str(recorder)])
    kinds = ("proposal", "slo", "budget")
    for seq in range(100):
        hook.submit(an_alert("slo", seq))
    for seq in range(100, 130):
        hook.submit(an_alert(kinds[seq % 2 * 2], seq))  # proposal / budget
    await hook.drain(30)
    running = peak = 0
    for line in log.read_text().splitlines():
        running += 1 if line.startswith("start") else -1
        peak = max(peak, running)
    assert 1 <= peak <= len(kinds)  # one process per kind at most
    bodies = [json.loads(p.read_text()) for p in seen.iterdir()]
    slo = [b for b in bodies if b["kind"] == "slo"]
    assert len(slo) + sum(b.get("coalesced", 0) for b in slo) == 100
    assert max(b["seq"] for b in slo) == 99  # the newest of a burst is the one sent
    assert hook.delivered + hook.coalesced == 130 and hook.failed == hook.timed_out == 0
    assert hook.delivered == len(bodies) < 10


def accounted(hook: CommandHook) -> int:
    """Alerts that ended in one of the hook's counters (each ends in exactly one)."""
    return hook.delivered + hook.failed + hook.timed_out + hook.coalesced + hook.dropped


async def test_alerts_closed_before_their_process_started_are_counted_dropped(
    tmp_path: Path,
) -> None:
    """aclose() right after submit: the lanes' tasks never reached their process (a
    whole-suite run under load closed one while asyncio was still starting it: 5 of 6
    were counted)."""
    ran = tmp_path / "ran"
    hook = CommandHook([str(script(tmp_path / "hook", f'touch "{ran}"\n'))])
    hook.submit(an_alert("proposal", 1))
    hook.submit(an_alert("slo", 2))
    await hook.aclose()
    assert (hook.delivered, hook.dropped, hook.coalesced) == (0, 2, 0)
    assert accounted(hook) == 2 and not hook.busy and not ran.exists()


async def test_alerts_folded_into_a_run_that_is_killed_are_dropped_with_it(
    tmp_path: Path,
) -> None:
    pids, first = tmp_path / "pids", tmp_path / "first"
    # The first run exits at once; the second (the waiting alert, one folded into it) hangs.
    body = f'if [ -e "{first}" ]; then echo $$ >> "{pids}"; exec sleep 60; fi\ntouch "{first}"\n'
    hook = CommandHook([str(script(tmp_path / "hook", body))], timeout_s=60)
    for seq in range(3):
        hook.submit(an_alert(seq=seq))  # 1 runs, 2 waits, 3 replaces it (folded: 1)
    assert hook.coalesced == 1
    for _ in range(500):
        if pids.exists():
            break
        await asyncio.sleep(0.02)
    assert pids.exists() and hook.delivered == 1
    await hook.aclose()
    assert all(gone(int(p)) for p in pids.read_text().split())
    assert (hook.delivered, hook.dropped, hook.coalesced) == (1, 2, 0)
    assert accounted(hook) == 3


async def test_aclose_kills_what_runs_and_drops_what_waits(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    sleeper = script(tmp_path / "sleeper", f'echo $$ >> "{pids}"\nexec sleep 60\n')
    hook = CommandHook([str(sleeper)], timeout_s=60)
    for seq in range(5):
        hook.submit(an_alert(seq=seq))
    for _ in range(200):
        if pids.exists():
            break
        await hook.drain(0.02)
    await hook.aclose()
    hook.submit(an_alert(seq=9))
    assert all(gone(int(p)) for p in pids.read_text().split())
    assert (hook.delivered, hook.dropped, hook.coalesced) == (0, 6, 0)  # 1 ran, 4 waited, 1 late
    assert accounted(hook) == 6 and not hook.busy
    assert os.environ.get("ITO_TOKEN") is None
