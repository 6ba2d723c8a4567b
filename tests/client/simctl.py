"""Start `python -m ito_tui.desk_sim` as a real subprocess on a fixed loopback port.

The client tests' own helper (tests/simproc.py belongs to the desk_sim part):
a fixed port lets the same client URL survive SIGKILL and restart, which is
what durability tests need.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

TOKENS = "alice:s3cret,bob:hunter2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class SimProc:
    """One desk_sim process; `kill()` is SIGKILL, `restart()` reuses the db and port."""

    def __init__(self, db_path: Path | None, *flags: str, port: int | None = None) -> None:
        self.db_path = db_path
        self.flags = list(flags)
        self.port = port or free_port()
        self.proc: subprocess.Popen[str] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0) -> SimProc:
        argv = [sys.executable, "-m", "ito_tui.desk_sim", "--port", str(self.port), *self.flags]
        if self.db_path is not None:
            argv += ["--db", str(self.db_path)]
        env = dict(os.environ, ITO_SIM_TOKENS=TOKENS)
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
        )
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.kill()
            raise RuntimeError(f"desk_sim did not start: {line!r}")
        if time.monotonic() > deadline:
            raise RuntimeError("desk_sim took too long to start")
        self.starts += 1
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def restart(self) -> SimProc:
        self.kill()
        return self.start()
