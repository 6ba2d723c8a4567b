"""Cyclic garbage collection while the program starts: paused, then frozen and resumed.

Loading Textual, the contract's pydantic models and the app creates tens of thousands
of container objects that live as long as the process. While they are being created the
cyclic collector scans them again and again and finds nothing: about 55 ms of the
~330 ms of CPU to the TUI's first frame on a 2-core machine (bench `cold_start`, #1).

`pause()`, at the entry point, turns collection off. `resume()` moves every object
alive into the permanent generation (`gc.freeze`), so later collections never scan the
start-up heap, and turns collection back on. The TUI resumes once its first frame is
painted, `main()` whenever it returns, and a timer `RESUME_AFTER_S` after the pause
whatever happens, so a long-running command (`serve`, `backend`, `--watch`) runs with
collection on and memory stays bounded. The price: garbage cycles made during start-up
are never collected, a bounded one-time amount.

`resume()` also sets the collector's thresholds (`THRESHOLDS`): the youngest generation
is collected after 3,000 net allocations instead of 700, the middle one after 20 of
those instead of 10. Textual makes ~5 `Strip`s a row drawn, each with five caches, and
in a 12,000 lines/s job-log flood (bench 18.13) the ones that lived a few frames were
promoted to the oldest generation at ~12,000 objects/s: a full collection every ~2.8 s,
~90 ms each (a key pressed then waited), 5.5 % of the app's wall time in collection
(`gc.callbacks`). With these thresholds they die young: no full collection in 10 s of
flood, 2.9 ms per young collection, 3.1 % in all.
"""

from __future__ import annotations

import gc
import os
import threading

__all__ = ["RESUME_AFTER_S", "THRESHOLDS", "no_pydantic_plugins", "pause", "resume"]

RESUME_AFTER_S = 2.0
"""Collection is back on this long after `pause()` at the latest."""
THRESHOLDS = (3000, 20, 10)
"""`gc.set_threshold` once start-up is over (see the module docstring)."""

_lock = threading.Lock()
_timer: threading.Timer | None = None
_frozen = False


def pause() -> None:
    """Turn cyclic collection off until `resume()` (or `RESUME_AFTER_S`, whichever first)."""
    global _timer
    with _lock:
        if _timer is not None or not gc.isenabled():
            return  # already paused, or collection was turned off by someone else
        gc.disable()
        _timer = threading.Timer(RESUME_AFTER_S, resume)
        _timer.daemon = True
        _timer.start()


def resume() -> None:
    """Freeze what start-up allocated (the first time) and turn collection back on.

    Idempotent and safe from any thread; a no-op when `pause()` was not called.
    """
    global _timer, _frozen
    with _lock:
        timer, _timer = _timer, None
        if timer is None:
            return
        if timer is not threading.current_thread():
            timer.cancel()
        if not _frozen:
            gc.freeze()
            gc.set_threshold(*THRESHOLDS)
            _frozen = True
        gc.enable()


def no_pydantic_plugins() -> None:
    """Tell pydantic not to look for plugins (ito-tui uses none), unless the user said
    otherwise in `PYDANTIC_DISABLE_PLUGINS`.

    Otherwise the first model pydantic builds reads the entry points of every installed
    distribution, ~6 ms of `ito-tui runs --json` (bench #2b) and of the TUI's first
    connection. Set in the environment, so a child process (the demo's simulator) skips
    the scan too.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
