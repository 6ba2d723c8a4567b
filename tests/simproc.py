"""`SimProcess`: the simulated backend as a real subprocess, for kill -9 durability tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

TOKENS_ENV = "alice:s3cret,bob:hunter2"
LISTENING = "ito-tui backend listening on "


class SimProcess:
    """`python -m ito_tui.desk_sim --port 0 --db DB ...` on 127.0.0.1.

    `start()` waits for the listening line and sets `url`; `kill()` sends SIGKILL;
    `restart()` starts it again with the same flags on the same database.
    """

    def __init__(self, db_path: Path, **flags: object) -> None:
        self.db_path = Path(db_path)
        self.flags = flags
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def argv(self) -> list[str]:
        args = [sys.executable, "-m", "ito_tui.desk_sim", "--host", "127.0.0.1", "--port", "0",
                "--db", str(self.db_path)]  # fmt: skip
        for name, value in self.flags.items():
            args += [f"--{name.replace('_', '-')}", str(value)]
        return args

    def start(self, timeout: float = 20.0) -> str:
        env = {**os.environ, "ITO_SIM_TOKENS": TOKENS_ENV}
        self.proc = subprocess.Popen(
            self.argv(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        line = _readline(self.proc.stdout, timeout)
        if not line.startswith(LISTENING):
            self.kill()
            raise RuntimeError(f"backend did not start: {line!r}")
        self.url = line[len(LISTENING) :].strip()
        return self.url

    def kill(self) -> None:
        """SIGKILL: no shutdown handler, no flush, no goodbye."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        if self.proc is not None:
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()

    def restart(self) -> str:
        self.kill()
        return self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.kill()


def _readline(stream: IO[str] | None, timeout: float) -> str:
    """One line from a pipe, or "" after `timeout` seconds."""
    if stream is None:
        return ""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else ""
