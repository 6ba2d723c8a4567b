"""Benchmark 'monitor' (issue 8 target(s) #4,5): not written yet."""

from __future__ import annotations

from .context import Context
from .record import Record


def run(ctx: Context) -> list[Record]:
    return [
        Record.unmeasured(i, "monitor", "monitor", "", "not written yet")
        for i in (
            4,
            5,
        )
    ]
