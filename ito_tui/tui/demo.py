"""`ito-tui demo`: the TUI on a simulated backend started as a child process, and stopped with it.

The simulator runs as `python -m ito_tui.desk_sim` in its own session on
127.0.0.1 with a free port and a throwaway database. Its operator token is
random and travels in the child's environment (`ITO_SIM_TOKENS`), never in
argv, and stays in memory on our side (never in the keyring). The child is
stopped when the TUI exits, on Ctrl+C, and when the terminal goes away
(SIGHUP) or we are told to stop (SIGTERM). When we die without a chance to stop
it (SIGKILL, an OOM kill), the child notices by itself: it holds the read end of
a pipe whose only write end is ours (`--parent-pipe`), and stops on its EOF;
on Linux it also asks for SIGTERM on our death (`PR_SET_PDEATHSIG`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import getpass
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING

from pydantic import SecretStr

if TYPE_CHECKING:
    from ito_tui.config import Settings

DEMO_SPEED = 3600.0
"""Simulated seconds per wall second: the showcase plays out in about four minutes.
Mirrors `ito_tui.desk_sim.config.DEMO_SPEED` (the TUI may not import the simulator;
a test checks the two agree)."""

DEMO_APPROVAL_SPEED = 80.0
"""While a proposal waits for a person, the demo's clock runs this slow: the
simulator's 4 simulated hours of proposal lifetime become 3 wall minutes, time
enough to read the evidence before it expires. Approving promptly keeps the
showcase at about four minutes."""

START_TIMEOUT_S = 30.0
UNWIND_GRACE_S = 3.0
"""Seconds the TUI gets to restore the terminal after SIGTERM before the process leaves."""
_LISTENING = re.compile(r"listening on (http://[\w.\-]+:(\d+))")


class DemoError(RuntimeError):
    """The simulated backend could not be started."""


class SimulatorChild:
    """One `python -m ito_tui.desk_sim` child process and its temporary directory."""

    def __init__(self, scenario: str, speed: float, operator: str) -> None:
        self.scenario = scenario
        self.speed = speed
        self.operator = operator
        self.token = SecretStr(secrets.token_urlsafe(24))
        self.workdir = Path(tempfile.mkdtemp(prefix="ito-demo-"))
        self.log_path = self.workdir / "backend.log"
        self.url = ""
        self.process: subprocess.Popen[str] | None = None
        self._lifeline: int | None = None
        self._stopped = False

    def start(self, timeout: float = START_TIMEOUT_S) -> str:
        """Start the child, wait for its `listening on` line and a TCP answer; return the URL.

        Call it from the main thread: Linux sends the child its parent-death signal
        when the *thread* that started it ends, not only when the process does.
        """
        env = dict(os.environ)
        env["ITO_SIM_TOKENS"] = f"{self.operator}:{self.token.get_secret_value()}"
        env.pop("ITO_TOKEN", None)
        argv = [
            sys.executable, "-m", "ito_tui.desk_sim",
            "--host", "127.0.0.1", "--port", "0",
            "--db", str(self.workdir / "desk.sqlite3"),
            "--scenario", self.scenario, "--speed", f"{self.speed:g}",
            "--approval-speed", f"{min(self.speed, DEMO_APPROVAL_SPEED):g}",
            # A finished run on another booking: the "previous happy run" to compare with.
            "--history", "happy",
        ]  # fmt: skip
        # The child stops at the pipe's EOF, which comes when the last write end closes:
        # the write end stays ours alone (os.pipe fds are close-on-exec, so neither the
        # child nor anything else we start inherits it), and dies with us however we die.
        # Dying first, we cannot remove the workdir: the child does, after a clean stop.
        watched, self._lifeline = os.pipe()
        argv += ["--parent-pipe", str(watched), "--remove-dir", str(self.workdir)]
        log = self.log_path.open("w", encoding="utf-8")
        try:
            # A new session: the terminal's Ctrl+C and SIGHUP reach us, not the child,
            # so the child stops exactly when we stop it (or die).
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                text=True,
                start_new_session=True,
                pass_fds=(watched,),
            )
        finally:
            os.close(watched)
            log.close()
        assert self.process.stdout is not None
        self.url = self._wait_for_url(self.process.stdout, timeout)
        # Keep draining stdout so the child never blocks on a full pipe.
        threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True).start()
        self._wait_until_answers(timeout)
        return self.url

    def _wait_for_url(self, stdout: IO[str], timeout: float) -> str:
        found: list[str] = []

        def read() -> None:
            for line in stdout:
                match = _LISTENING.search(line)
                if match:
                    found.append(match.group(1))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if not found:
            self.stop()
            raise DemoError(f"the simulated backend did not start: {self._log_tail()}")
        return found[0]

    def _drain(self, stdout: IO[str]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for _line in stdout:
                pass

    def _wait_until_answers(self, timeout: float) -> None:
        port = int(self.url.rsplit(":", 1)[1])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise DemoError(f"the simulated backend does not answer: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "no log"
        return " | ".join(lines[-5:]) or "no output"

    def stop(self) -> None:
        """Stop the child (TERM, then KILL after 3 s) and remove its directory. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self._lifeline is not None:
            with contextlib.suppress(OSError):
                os.close(self._lifeline)
            self._lifeline = None
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=3)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _operator_name() -> str:
    try:
        name = re.sub(r"[^A-Za-z0-9_.-]", "", getpass.getuser())
    except (OSError, KeyError):
        name = ""
    return name or "operator"


def _install_stop_handlers(child: SimulatorChild) -> Callable[[], None]:
    """Stop the child at exit and on SIGHUP/SIGTERM; returns a function undoing the handlers."""
    atexit.register(child.stop)
    previous: dict[int, object] = {}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        child.stop()
        if signum == signal.SIGHUP:
            # The terminal is gone: there is nothing to restore, and unwinding a TUI
            # whose tty vanished can hang while its input thread spins on the dead
            # terminal (seen: orphaned demos at ~45% of a core). Leave at once.
            os._exit(128 + signum)
        # Unwind (the TUI restores the terminal on the way out), exiting as 128 + signal;
        # should the unwinding hang, leave anyway after a grace period.
        watchdog = threading.Timer(UNWIND_GRACE_S, os._exit, args=(128 + signum,))
        watchdog.daemon = True
        watchdog.start()
        raise SystemExit(128 + signum)

    for sig in (signal.SIGHUP, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            previous[sig] = signal.signal(sig, on_signal)

    def undo() -> None:
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, handler)  # type: ignore[arg-type]  # a handler signal gave us
        atexit.unregister(child.stop)

    return undo


def _load_settings() -> Settings:
    from ito_tui.config import ConfigError, Settings

    try:
        return Settings.load()
    except ConfigError as exc:
        # A broken settings file should not stop a demo: say so and use the defaults.
        print(f"ito-tui demo: ignoring settings: {exc}", file=sys.stderr)
        return Settings()


def run_demo(
    scenario: str = "showcase",
    speed: float | None = None,
    settings: Settings | None = None,
) -> int:
    """Start the simulated backend, run the TUI on it, stop the backend; returns the exit code."""
    child = SimulatorChild(scenario, DEMO_SPEED if speed is None else speed, _operator_name())
    undo = _install_stop_handlers(child)
    try:
        print(f"Starting the simulated backend (scenario {scenario}) …", file=sys.stderr)
        try:
            url = child.start()
        except DemoError as exc:
            print(f"ito-tui demo: {exc}", file=sys.stderr)
            return 1
        base = settings if settings is not None else _load_settings()
        demo_settings = dataclasses.replace(base, backend_url=url)
        from ito_tui.tui.launch import run_tui

        return run_tui(demo_settings, read_only=base.read_only, token=child.token)
    except KeyboardInterrupt:
        return 130
    finally:
        child.stop()
        undo()
