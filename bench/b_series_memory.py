"""Benchmark 'series_memory' (issue 8 target(s) #9): not written yet."""

from __future__ import annotations

from .context import Context
from .record import Record


def run(ctx: Context) -> list[Record]:
    return [
        Record.unmeasured(i, "series_memory", "series_memory", "", "not written yet") for i in (9,)
    ]
