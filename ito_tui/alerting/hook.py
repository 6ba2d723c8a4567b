"""The command hook: run the operator's program once per alert, the alert as JSON on stdin.

`[alerts] command = ["notify-send", "ito"]` is how a team wires Slack, PagerDuty or mail
(`curl` in a script) without ito-tui learning any of them. The rules, each because an
alert path must never become the thing that breaks at 3 a.m.:

- an argv list run with `create_subprocess_exec`, never a shell; the alert goes on stdin
  as one JSON object (`Alert.to_json`, plus `"coalesced": N` when it stands for more);
- asynchronous: `submit` never blocks and never waits for a process;
- at most one process in flight per alert kind: alerts of a kind arriving while its
  process runs are folded into one next run (the newest of them, counted), so a burst of
  3,000 SLO breaches is two processes, not 3,000;
- a timeout: the process runs in its own session and its whole process group is killed
  (SIGTERM, then SIGKILL), so a script's children go too;
- stdout and stderr are read as they come and thrown away but for a few KiB of stderr
  for the failure message: a program that floods them neither grows memory nor blocks;
- its environment is ours minus `ITO_TOKEN`, `ITO_SIM_TOKENS` and any variable whose
  value holds a registered secret (`ito_tui.redaction`); a command line holding one
  is not run at all;
- a failure (not found, non-zero exit, timeout) is logged, redacted, every time, and
  reported to `on_failure` once per hook: never a crash, never a toast per alert.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ito_tui.redaction import redact_secrets
from ito_tui.textsafe import one_line

from .model import Alert

__all__ = ["SCRUBBED_VARIABLES", "CommandHook", "hook_environment"]

log = logging.getLogger("ito_tui.alerting.hook")

SCRUBBED_VARIABLES = frozenset({"ITO_TOKEN", "ITO_SIM_TOKENS"})
"""Never passed to the command, whatever they hold."""
_KEEP_STDERR = 4096
"""Bytes of stderr kept for the failure message; the rest is read and dropped."""
_CHUNK = 65536
_GRACE_S = 1.0
"""After SIGTERM on a timeout, how long the group has before SIGKILL."""


def hook_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without the token variables and without any variable holding a secret."""
    return {
        name: value
        for name, value in environ.items()
        if name not in SCRUBBED_VARIABLES and redact_secrets(value) == value
    }


@dataclass
class _Lane:
    """One alert kind's process and what waits for it."""

    task: asyncio.Task[None] | None = None
    waiting: Alert | None = None
    """The newest alert of this kind that arrived while its process ran."""
    folded: int = 0
    """Alerts replaced by a newer one while waiting (the next run's `coalesced`)."""
    serving: int | None = None
    """While an alert is being served and not yet counted: how many were folded into it.
    A task cancelled before its first step never runs its body, so `aclose` counts it."""


class CommandHook:
    """Runs `argv` once per alert (see the module docstring for the rules).

    Counters: `delivered` (runs that exited 0), `failed` (could not start, or exited
    non-zero), `timed_out` (killed at the timeout), `coalesced` (alerts folded into a
    later run) and `dropped` (running or waiting when the hook was closed, or submitted
    after). Every submitted alert ends in exactly one of them.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float = 10.0,
        on_failure: Callable[[str], None] | None = None,
    ) -> None:
        if not argv:
            raise ValueError("an alert command needs a program (an argv list)")
        self.argv = tuple(argv)
        self.timeout_s = timeout_s
        self.on_failure = on_failure
        self.delivered = 0
        self.coalesced = 0
        self.failed = 0
        self.timed_out = 0
        self.dropped = 0
        self._lanes: dict[str, _Lane] = {}
        self._reported = False
        self._closed = False

    def __repr__(self) -> str:
        return f"CommandHook({self.argv[0]!r}, delivered={self.delivered}, failed={self.failed})"

    @property
    def busy(self) -> bool:
        """Whether a process runs or an alert waits for one."""
        return any(lane.task is not None for lane in self._lanes.values())

    def submit(self, alert: Alert) -> None:
        """Hand `alert` to the command; returns at once (needs a running event loop)."""
        if self._closed:
            self.dropped += 1
            return
        lane = self._lanes.setdefault(alert.kind, _Lane())
        if lane.task is None:
            loop = asyncio.get_running_loop()
            lane.serving = 0
            lane.task = loop.create_task(self._serve(lane, alert), name=f"alert-hook-{alert.kind}")
            return
        if lane.waiting is not None:
            lane.folded += 1
            self.coalesced += 1
        lane.waiting = alert

    async def drain(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for every running and waiting alert (a CLI about to exit)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            tasks = [lane.task for lane in self._lanes.values() if lane.task is not None]
            left = deadline - loop.time()
            if not tasks or left <= 0:
                return
            await asyncio.wait(tasks, timeout=left)

    async def aclose(self) -> None:
        """Kill what runs and drop what waits; later `submit`s are dropped."""
        self._closed = True
        tasks = []
        for lane in self._lanes.values():
            if lane.waiting is not None:
                self.dropped += 1 + lane.folded
                self.coalesced -= lane.folded
                lane.waiting, lane.folded = None, 0
            if lane.task is not None:
                lane.task.cancel()
                tasks.append(lane.task)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for lane in self._lanes.values():
            lane.task = None  # a task cancelled before its first step never ran `finally`
            # Cancelled before its process started, while it started (asyncio kills it)
            # or while it ran (`_run` kills its group): dropped, with what was folded in.
            if lane.serving is not None:
                self.dropped += 1 + lane.serving
                self.coalesced -= lane.serving
                lane.serving = None

    # ------------------------------------------------------------ one kind's lane

    async def _serve(self, lane: _Lane, alert: Alert) -> None:
        try:
            folded = 0
            while True:
                await self._run(alert, folded)  # counted it (no await after the count)
                lane.serving = None
                if lane.waiting is None or self._closed:
                    return
                alert, folded = lane.waiting, lane.folded
                lane.waiting, lane.folded = None, 0
                lane.serving = folded
        finally:
            lane.task = None

    async def _run(self, alert: Alert, folded: int) -> None:
        body = alert.to_json()
        if folded:
            body["coalesced"] = folded
        payload = json.dumps(body, allow_nan=False).encode() + b"\n"
        if any(redact_secrets(arg) != arg for arg in self.argv):
            self._failure("was not run: a token is in its arguments")
            return
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=hook_environment(os.environ),
                start_new_session=True,
            )
        except FileNotFoundError:
            self._failure("not found")
            return
        except PermissionError:
            self._failure("not executable (permission denied)")
            return
        except OSError as exc:
            self._failure(f"could not start ({exc.strerror or type(exc).__name__})")
            return
        stderr = bytearray()
        try:
            await asyncio.wait_for(self._talk(process, payload, stderr), self.timeout_s)
        except TimeoutError:
            await _kill_group(process)
            self.timed_out += 1
            self._failure(f"timed out after {self.timeout_s:g} s and was killed", counted=True)
            return
        except asyncio.CancelledError:
            await _kill_group(process)
            raise
        if process.returncode == 0:
            self.delivered += 1
            return
        said = one_line(stderr.decode("utf-8", "replace"), max_len=200)
        self._failure(f"exited {_status(process.returncode)}" + (f": {said}" if said else ""))

    async def _talk(
        self, process: asyncio.subprocess.Process, payload: bytes, stderr: bytearray
    ) -> None:
        """Write stdin, read both pipes to their end (keeping a little stderr), reap."""
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        await asyncio.gather(
            _feed(process.stdin, payload),
            _discard(process.stdout, None),
            _discard(process.stderr, stderr),
        )
        await process.wait()

    def _failure(self, what: str, *, counted: bool = False) -> None:
        if not counted:
            self.failed += 1
        message = redact_secrets(f"alert command {one_line(self.argv[0], max_len=80)!r} {what}")
        log.warning("%s", message)
        if self._reported or self.on_failure is None:
            return
        self._reported = True
        try:
            self.on_failure(message)
        except Exception:
            log.exception("the alert command's failure could not be reported")


async def _feed(stdin: asyncio.StreamWriter, payload: bytes) -> None:
    # A program that does not read its stdin (notify-send) may exit first: not a failure.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
    stdin.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await stdin.wait_closed()


async def _discard(stream: asyncio.StreamReader, keep: bytearray | None) -> None:
    while chunk := await stream.read(_CHUNK):
        if keep is not None and len(keep) < _KEEP_STDERR:
            keep += chunk[: _KEEP_STDERR - len(keep)]


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the process's group, SIGKILL it after a grace period, and reap the process.

    The group outlives its leader while a child of the script runs, so it gets the
    SIGKILL whether or not the leader went at SIGTERM.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), _GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


def _status(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"on signal {signal.Signals(-code).name}"
        except ValueError:
            return f"on signal {-code}"
    return str(code)
