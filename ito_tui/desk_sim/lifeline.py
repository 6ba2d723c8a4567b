"""The simulator's tie to the process that started it: it stops when that process dies.

`ito-tui demo` starts the simulator in its own session (so the terminal's Ctrl+C
and SIGHUP reach the TUI, not the child) and hands it the read end of a pipe
(`--parent-pipe FD`) whose only write end the demo holds. However the demo ends
(an exit, a signal, SIGKILL from an OOM killer), the kernel closes that write
end, the read end reaches EOF, and the simulator shuts its server down the
normal way (lifespan shutdown, SQLite closed). The pipe is the portable primary
mechanism; on Linux `PR_SET_PDEATHSIG` is a backstop should the pipe's write end
have leaked into another process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
"""`prctl(2)` option (linux/prctl.h)."""
EXIT_GRACE_S = 10.0
"""Wall seconds a graceful shutdown may take after the parent died before we leave anyway."""
EXIT_PARENT_GONE = 3
"""Exit status when the graceful shutdown did not finish within `EXIT_GRACE_S`."""


def set_parent_death_signal(signum: int = signal.SIGTERM) -> bool:
    """Ask Linux to send us `signum` when our parent dies; whether it was set.

    SIGTERM, so uvicorn's handler shuts down gracefully. Two caveats make this a
    backstop only: the kernel's "parent" is the *thread* that forked us, so a
    parent that starts us from a short-lived thread gets us killed when that thread
    ends (`ito-tui demo` starts us from its main thread); and a parent that died
    before this call is not noticed (the pipe's EOF is).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.prctl(
            ctypes.c_int(PR_SET_PDEATHSIG),
            ctypes.c_ulong(signum),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
    except (OSError, AttributeError):
        return False
    return int(result) == 0


def is_open(fd: int) -> bool:
    """Whether `fd` is an open file descriptor (one we can watch for EOF)."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def watch_parent_pipe(
    fd: int, on_eof: Callable[[], None], grace_s: float = EXIT_GRACE_S
) -> threading.Thread:
    """Call `on_eof()` once `fd` reaches EOF; leave the process `grace_s` seconds later.

    A thread blocked in `read`, not a reader on the event loop: a loop that hangs
    must not keep an orphan alive. `on_eof` runs on that thread, so it must only
    request the shutdown (e.g. set uvicorn's `should_exit`). The thread is a daemon:
    a shutdown that completes in time ends the process before the grace runs out.
    """

    def run() -> None:
        while True:
            try:
                data = os.read(fd, 512)
            except OSError:
                data = b""
            # Nobody writes to the pipe; bytes, should any come, are not an EOF.
            if not data:
                break
        on_eof()
        time.sleep(grace_s)
        os._exit(EXIT_PARENT_GONE)

    thread = threading.Thread(target=run, name="desk-sim-parent-pipe", daemon=True)
    thread.start()
    return thread
