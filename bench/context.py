"""Shared run context: quick/full sizing, paths, and the simulated backend as a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TOKEN = "s3cret"
OPERATOR = "alice"


@dataclass
class Context:
    """Sizing and helpers handed to every benchmark."""

    quick: bool = False
    log_lines: list[str] = field(default_factory=list)

    def pick(self, full: float, quick: float) -> float:
        return quick if self.quick else full

    def count(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def log(self, msg: str) -> None:
        line = f"  [{time.strftime('%H:%M:%S')}] {msg}"
        self.log_lines.append(line)
        print(line, flush=True)

    @property
    def python(self) -> str:
        return sys.executable

    @property
    def ito_tui(self) -> str:
        return str(BIN / "ito-tui")


@dataclass
class Backend:
    """A running `python -m ito_tui.desk_sim` child on 127.0.0.1."""

    url: str
    token: str
    proc: subprocess.Popen[bytes]
    db: Path

    def env(self) -> dict[str, str]:
        """ITO_* variables that point the CLI/TUI at this backend."""
        return {"ITO_BACKEND_URL": self.url, "ITO_TOKEN": self.token}


_LISTENING = re.compile(rb"listening on (http://\S+)")


@contextmanager
def backend(
    *,
    speed: float = 60.0,
    scenario: str = "happy",
    db: Path | None = None,
    extra: list[str] | None = None,
    timeout: float = 30.0,
) -> Iterator[Backend]:
    """Start desk_sim on a free loopback port; kill it (SIGKILL) on exit."""
    with tempfile.TemporaryDirectory(prefix="ito-bench-") as tmp:
        db_path = db or Path(tmp) / "sim.db"
        env = {**os.environ, "ITO_SIM_TOKENS": f"{OPERATOR}:{TOKEN},bob:hunter2"}
        argv = [
            sys.executable,
            "-m",
            "ito_tui.desk_sim",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(db_path),
            "--speed",
            str(speed),
            "--scenario",
            scenario,
            *(extra or []),
        ]
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT
        )
        assert proc.stdout is not None
        url: list[str] = []

        def _read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                m = _LISTENING.search(line)
                if m and not url:
                    url.append(m.group(1).decode())

        reader = threading.Thread(target=_read, daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        while not url and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        try:
            if not url:
                raise RuntimeError(f"desk_sim did not start: {' '.join(argv)}")
            yield Backend(url[0], TOKEN, proc, db_path)
        finally:
            proc.kill()
            proc.wait(timeout=10)
