"""Drive a real program in a detached tmux session: send keys, read the screen.

Each pane runs on its own tmux server socket (`tmux -L <name>`), so tests never
touch the developer's tmux and a whole server can be torn down at the end.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path


class TmuxPane:
    """One detached tmux session running one command at a fixed size."""

    def __init__(
        self,
        command: list[str],
        *,
        width: int = 80,
        height: int = 24,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("tmux is not installed")
        self.socket = f"ito-e2e-{uuid.uuid4().hex[:8]}"
        self.session = "ito"
        self.width = width
        self.height = height
        self._command = command
        self._env = dict(env or {})
        self._cwd = cwd

    # ------------------------------------------------------------ lifecycle

    def tmux(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=20,
        )
        return out.stdout

    def start(self) -> TmuxPane:
        env = {**os.environ, **self._env}
        env.pop("TMUX", None)
        # The program's environment reaches it through `env` in the shell command;
        # a token is never put on this command line (tests pass secrets via os.environ).
        exports = " ".join(
            f"{k}={shlex.quote(v)}" for k, v in self._env.items() if not k.endswith("TOKEN")
        )
        shell_cmd = f"exec env {exports} {shlex.join(self._command)}"
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                self.session,
                "-x",
                str(self.width),
                "-y",
                str(self.height),
                shell_cmd,
            ],
            env=env,
            cwd=self._cwd,
            check=True,
            timeout=20,
        )
        self.tmux("set-option", "-g", "monitor-bell", "on")
        self.tmux("set-option", "-g", "bell-action", "any")
        self.tmux("set-option", "-g", "set-titles", "on")
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        return self

    def kill(self) -> None:
        self.tmux("kill-server", check=False)

    def __enter__(self) -> TmuxPane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()

    # ------------------------------------------------------------ interaction

    def send(self, *keys: str, literal: bool = False) -> None:
        args = ["send-keys", "-t", self.session]
        if literal:
            args.append("-l")
        self.tmux(*args, *keys)

    def type(self, text: str) -> None:
        self.send(text, literal=True)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def fmt(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.session, fmt).strip()

    @property
    def pane_title(self) -> str:
        return self.fmt("#{pane_title}")

    @property
    def bell_flag(self) -> bool:
        return self.fmt("#{window_bell_flag}") == "1"

    @property
    def pane_pid(self) -> int:
        return int(self.fmt("#{pane_pid}"))

    @property
    def dead(self) -> bool:
        return self.fmt("#{pane_dead}") == "1"

    def wait_for(
        self,
        predicate: str | Callable[[str], bool],
        *,
        timeout: float = 30.0,
        interval: float = 0.2,
    ) -> str:
        """Wait until the screen contains `predicate` (or satisfies it); return the screen."""
        check = (lambda s: predicate in s) if isinstance(predicate, str) else predicate
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(interval)
        raise AssertionError(f"timed out waiting for {predicate!r}; screen was:\n{screen}")
