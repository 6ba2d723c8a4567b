"""Reading a child process's output after a test has read lines of it.

`Popen.communicate` with a timeout, or with two pipes, reads the pipes' file descriptors
beneath the text streams: what `readline` had already buffered from them is lost (CI lost
`watch --json` lines seq 2-7 that way). `rest_of_output` reads through the same streams.
"""

from __future__ import annotations

import subprocess
import threading

__all__ = ["rest_of_output"]


def rest_of_output(proc: subprocess.Popen[str], bound_s: float) -> tuple[str, str]:
    """The rest of `proc`'s stdout and its stderr (a pipe or not: then ""), read until it
    exits, through the streams a test may have read lines from; `proc` is killed after
    `bound_s` seconds (a bound, not a timed assertion)."""
    assert proc.stdout is not None
    err: list[str] = []
    reader = None
    if proc.stderr is not None:
        stream = proc.stderr
        reader = threading.Thread(target=lambda: err.append(stream.read()), daemon=True)
        reader.start()
    watchdog = threading.Timer(bound_s, proc.kill)
    watchdog.start()
    try:
        out = proc.stdout.read()
        proc.wait()
        if reader is not None:
            reader.join()
    finally:
        watchdog.cancel()
    return out, "".join(err)
