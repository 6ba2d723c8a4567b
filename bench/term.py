"""Run a program in a real pseudo-terminal and watch what it writes.

`TermProcess` starts a program on the slave side of a pty of a fixed size
(TERM=xterm-256color, no COLORTERM, so Textual uses 256 colours), reads
everything it writes on a reader thread, counts bytes, and timestamps each
chunk the moment `os.read` returns it. Markers ("the first frame is painted",
"the key's effect is on screen") are searched in the output with escape
sequences stripped; the time of a marker is the arrival time of the chunk that
completed it, taken on the reader thread, so the harness's own parsing does not
delay it.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from . import procstat

# CSI, OSC (BEL or ST terminated), DCS/APC/PM/SOS strings, charset selection, 2-byte escapes.
_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[P_^X][^\x1b]*\x1b\\"
    r"|\x1b[()*+][0-9A-Za-z]"
    r"|\x1b[@-Z\\-_=>78]"
)
_TEXT_TAIL = 1 << 20  # stripped text kept for marker search


@dataclass
class _Waiter:
    marker: str | None
    start: int  # absolute offset in the stripped text (or chunk count when marker is None)
    after: float
    done: threading.Event = field(default_factory=threading.Event)
    at: float | None = None
    on_found: Callable[[], None] | None = None


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a benchmarked program: 256-colour xterm, no inherited Textual knobs."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEXTUAL", "TMUX", "COLORTERM", "NO_COLOR", "ITO_", "PYTEST"))
    }
    env.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    if extra:
        env.update(extra)
    return env


class TermProcess:
    """A child program attached to a pty of `cols`×`rows`, with its output watched."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cols: int = 120,
        rows: int = 36,
        cwd: str | None = None,
        keep_raw: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.raw: list[tuple[float, bytes]] | None = [] if keep_raw else None
        """Every chunk with its arrival time, when `keep_raw` (for diagnostics)."""
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self._master = master
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            self.argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=dict(env) if env is not None else clean_env(),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.pid = self.proc.pid
        self.bytes_total = 0
        self.chunks = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self._text = ""
        self._text_base = 0  # absolute offset of self._text[0]
        self._lock = threading.Lock()
        self._waiters: list[_Waiter] = []
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name="pty-reader", daemon=True)
        self._reader.start()

    # ------------------------------------------------------------ reading

    def _read_loop(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._master], [], [], 0.5)
                if not ready:
                    if self.proc.poll() is not None:
                        break
                    continue
                data = os.read(self._master, 1 << 16)
            except OSError:
                break
            now = time.perf_counter()
            if not data:
                break
            self._feed(data, now)
        self._closed.set()
        with self._lock:
            for w in self._waiters:
                w.done.set()

    def _feed(self, data: bytes, now: float) -> None:
        text = self._pending + self._decoder.decode(data)
        # Hold back a trailing, possibly incomplete escape sequence until the next chunk.
        cut = text.rfind("\x1b")
        if cut != -1 and len(text) - cut < 256 and not _ESCAPE.match(text, cut):
            self._pending, text = text[cut:], text[:cut]
        else:
            self._pending = ""
        stripped = _ESCAPE.sub("", text)
        with self._lock:
            if self.raw is not None:
                self.raw.append((now, data))
            self.bytes_total += len(data)
            self.chunks += 1
            self._text += stripped
            if len(self._text) > 2 * _TEXT_TAIL:
                drop = len(self._text) - _TEXT_TAIL
                self._text = self._text[drop:]
                self._text_base += drop
            for w in list(self._waiters):
                if self._satisfied(w):
                    w.at = now
                    if w.on_found is not None:
                        w.on_found()
                    w.done.set()
                    self._waiters.remove(w)

    def _satisfied(self, w: _Waiter) -> bool:
        if w.marker is None:
            return self.chunks > w.start
        lo = max(w.start - self._text_base, 0)
        return self._text.find(w.marker, lo) != -1

    # ------------------------------------------------------------ waiting

    def _arm(self, marker: str | None, on_found: Callable[[], None] | None = None) -> _Waiter:
        with self._lock:
            start = self.chunks if marker is None else self._text_base + len(self._text)
            w = _Waiter(marker, start, time.perf_counter(), on_found=on_found)
            self._waiters.append(w)
            return w

    def wait_marker(
        self,
        marker: str,
        timeout: float,
        *,
        from_start: bool = True,
        on_found: Callable[[], None] | None = None,
    ) -> float | None:
        """Seconds from process start until `marker` is on screen (None on timeout/exit)."""
        with self._lock:
            w = _Waiter(marker, 0 if from_start else self._text_base + len(self._text), 0.0)
            w.on_found = on_found
            if self._satisfied(w):
                w.at = time.perf_counter()
                if on_found is not None:
                    on_found()
                return w.at - self.started
            self._waiters.append(w)
        w.done.wait(timeout)
        with self._lock:
            if w in self._waiters:
                self._waiters.remove(w)
        return None if w.at is None else w.at - self.started

    def press(self, key: bytes, marker: str | None = None, timeout: float = 5.0) -> float | None:
        """Write `key` to the terminal and return the seconds until the first output chunk
        that shows its effect: any output when `marker` is None, else the chunk that
        completes `marker` in the text written after the key."""
        w = self._arm(marker)
        t0 = time.perf_counter()
        os.write(self._master, key)
        w.done.wait(timeout)
        with self._lock:
            if w in self._waiters:
                self._waiters.remove(w)
        return None if w.at is None else w.at - t0

    def wait_output(self, timeout: float) -> float | None:
        """Seconds until the next chunk of output arrives (None on timeout or exit)."""
        w = self._arm(None)
        w.done.wait(timeout)
        with self._lock:
            if w in self._waiters:
                self._waiters.remove(w)
        return None if w.at is None else w.at - w.after

    def quiet(self, seconds: float, settle_timeout: float = 10.0) -> None:
        """Wait until the program wrote nothing for `seconds` (bounded by `settle_timeout`)."""
        deadline = time.perf_counter() + settle_timeout
        last = (self.bytes_total, time.perf_counter())
        while time.perf_counter() < deadline:
            time.sleep(min(0.05, seconds / 4))
            if self.bytes_total != last[0]:
                last = (self.bytes_total, time.perf_counter())
            elif time.perf_counter() - last[1] >= seconds:
                return

    def text(self) -> str:
        """The stripped output text kept so far (a bounded tail)."""
        with self._lock:
            return self._text

    def write(self, data: bytes) -> None:
        os.write(self._master, data)

    def resize(self, cols: int, rows: int, timeout: float = 10.0) -> float | None:
        """Give the terminal a new size and tell the program (SIGWINCH), which repaints all
        of it; the seconds until its first output after that (None: none in `timeout`)."""
        w = self._arm(None)
        t0 = time.perf_counter()
        fcntl.ioctl(self._master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGWINCH)
        w.done.wait(timeout)
        with self._lock:
            if w in self._waiters:
                self._waiters.remove(w)
        return None if w.at is None else w.at - t0

    # ------------------------------------------------------------ measuring

    def cpu(self) -> float:
        return procstat.cpu_seconds(self.pid)

    def rss(self) -> int:
        return procstat.rss_bytes(self.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Kill the program (its whole session) and release the pty."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._reader.join(timeout=2)
        with contextlib.suppress(OSError):
            os.close(self._master)

    def __enter__(self) -> TermProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Window:
    """CPU and terminal bytes of one program over a measured window."""

    seconds: float
    cpu_s: float
    bytes: int

    @property
    def cpu_frac(self) -> float:
        """Fraction of one core."""
        return self.cpu_s / self.seconds if self.seconds else 0.0

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds if self.seconds else 0.0


def measure_windows(procs: Sequence[TermProcess], seconds: float) -> list[Window]:
    """Measure several programs over the same wall-clock window (paired, so they share
    the machine's noise)."""
    t0 = time.perf_counter()
    c0 = [p.cpu() for p in procs]
    b0 = [p.bytes_total for p in procs]
    time.sleep(seconds)
    t1 = time.perf_counter()
    c1 = [p.cpu() for p in procs]
    b1 = [p.bytes_total for p in procs]
    return [Window(t1 - t0, c1[i] - c0[i], b1[i] - b0[i]) for i in range(len(procs))]
