"""Drives an interactive shell in a pseudo-terminal, to see what its completion offers.

zsh and tcsh complete only inside their line editors, which need a terminal: the
shell runs on a pty, sources the completion script, gets a command line and a key
(Tab; tcsh's ^D lists the choices), and what it draws is read back until every
expected word shows (or the shell goes quiet for good).
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from collections.abc import Sequence

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[>=]|[\r\x07]")
READY = 'echo "READY""MARK"'  # the shell prints READYMARK; its echo of the line does not
PROMPT = "> "
"""The prompt the setup lines must set."""


def complete_in(
    argv: Sequence[str],
    setup: Sequence[str],
    line: str,
    key: str,
    expect: Sequence[str],
    env: dict[str, str],
    wait_s: float = 20.0,
) -> str:
    """Run `argv` on a pty, send `setup` lines, then `line` + `key`; return what the shell
    drew after it (escape sequences removed) once all of `expect` appear in it."""
    leader, follower = os.openpty()
    proc = subprocess.Popen(
        list(argv),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    try:
        for command in [*setup, READY]:
            os.write(leader, command.encode() + b"\n")
        # Type only once the line editor reads keys: before, the terminal is in cooked mode,
        # where tcsh's ^D is eaten by the terminal itself. The editor has started once the
        # prompt after READYMARK is drawn, and it echoes the line back before the key goes.
        _read_until(leader, [PROMPT], wait_s, after="READYMARK")
        os.write(leader, line.encode())
        _read_until(leader, [line.rstrip()], wait_s)
        os.write(leader, key.encode())
        return _read_until(leader, expect, wait_s)
    finally:
        proc.kill()
        proc.wait(10)
        os.close(leader)


def _read_until(fd: int, expect: Sequence[str], wait_s: float, after: str = "") -> str:
    """Read `fd` until each of `expect` was drawn (past the first `after`, if given)."""
    seen = ""
    deadline = time.monotonic() + wait_s

    def done() -> bool:
        tail = seen.partition(after)[2] if after else seen
        return (not after or after in seen) and all(word in tail for word in expect)

    while not done() and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the shell exited
                break
            seen += ESCAPES.sub("", chunk.decode(errors="replace"))
    return seen
