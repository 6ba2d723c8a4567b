"""`ito-tui demo` killed with SIGKILL, as an OOM killer or a dropped session's cleanup
does, leaves no simulator and no temporary directory behind: twenty times, at two
moments of the demo's life."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from .conftest import ITO_TUI, alive, isolated_env, wait_gone

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

ROUNDS = 20
GONE_S = 10.0
"""How long an orphaned simulator may take to notice and stop (it takes well under a second)."""
SIMULATOR = "ito_tui.desk_sim"
T = TypeVar("T")


class PtyDemo:
    """`ito-tui demo` on a pseudo-terminal of 80x24, as the leader of its own session."""

    def __init__(self, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.proc = subprocess.Popen(
            [str(ITO_TUI), "demo"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.output = bytearray()

    def simulators(self) -> list[int]:
        """The demo's live children running the simulator."""
        found = []
        for task in Path(f"/proc/{self.proc.pid}/task").glob("*"):
            with contextlib.suppress(OSError):
                for pid in map(int, (task / "children").read_text().split()):
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if SIMULATOR.encode() in cmdline and alive(pid):
                        found.append(pid)
        return found

    def wait_for(self, probe: Callable[[], T], what: str, timeout: float = 30.0) -> T:
        """Read the terminal (so the TUI never blocks on it) until `probe()` is truthy."""
        deadline = time.monotonic() + timeout
        while not (found := probe()):
            if time.monotonic() > deadline:
                tail = self.output[-400:].decode(errors="replace")
                raise AssertionError(f"no {what} after {timeout} s; terminal: {tail!r}")
            ready, _, _ = select.select([self.master], [], [], 0.02)
            if ready:
                with contextlib.suppress(OSError):  # EIO: the demo closed the terminal
                    self.output += os.read(self.master, 65536)
        return found

    def shows(self, text: bytes) -> bool:
        return text in self.output

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        os.close(self.master)


@pytest.mark.long(seconds=24)
@pytest.mark.timeout(300)  # twenty demo start-ups took over 120 s on a loaded 2-core machine
def test_sigkilled_demo_leaves_no_simulator_and_no_directory_behind(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, TERM="xterm-256color")
    orphans: list[int] = []
    try:
        for round_ in range(ROUNDS):
            demo = PtyDemo(env)
            found = demo.wait_for(demo.simulators, "simulator")
            if round_ % 2:
                # Killed in use: the TUI shows the simulator's bookings (it serves and ticks).
                demo.wait_for(functools.partial(demo.shows, b"bk_h100"), "booking list")
            # Else killed at once: the child may still be importing, or not listening yet.
            assert all(alive(pid) for pid in found)
            demo.kill()
            left = wait_gone(found, GONE_S)
            orphans += left
            for pid in left:
                os.kill(pid, signal.SIGKILL)
    finally:
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert orphans == [], f"{len(orphans)} of {ROUNDS} simulators outlived their demo"
    # Each one stopped the normal way and removed the demo's directory (database, lock,
    # log): it stays only after a failed stop, so its log says what went wrong.
    left_dirs = sorted((tmp_path / "tmp").glob("ito-demo-*"))
    logs = [(d / "backend.log").read_text(errors="replace") for d in left_dirs]
    assert left_dirs == [], f"{len(left_dirs)} demo directories left; first log: {logs[:1]}"
