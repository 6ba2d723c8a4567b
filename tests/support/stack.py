"""Whether code recurses on the interpreter's stack down to its limit, seen from a garbage
collection: the place where a finalizer (a socket's, a task's) would run and fail."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

HEADROOM = 40
"""Python frames a finalizer may need; a collection with fewer left counts as starved."""


def _frames(n: int) -> int:
    return 0 if n == 0 else _frames(n - 1)


def starved_during(fn: Callable[[], Any]) -> bool:
    """Whether a garbage collection ran, during `fn()`, with under `HEADROOM` frames of stack
    left. Collections run at every allocation meanwhile (threshold 1), so a C parser that
    recurses allocating a list per level meets one near its deepest point."""
    starved: list[bool] = []

    def probe(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            try:
                _frames(HEADROOM)
            except RecursionError:
                starved.append(True)

    threshold = gc.get_threshold()
    gc.callbacks.append(probe)
    gc.set_threshold(1)
    try:
        fn()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(probe)
    return bool(starved)
