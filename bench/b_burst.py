"""Benchmark 'burst' (issue 8 target(s) #6): not written yet."""

from __future__ import annotations

from .context import Context
from .record import Record


def run(ctx: Context) -> list[Record]:
    return [Record.unmeasured(i, "burst", "burst", "", "not written yet") for i in (6,)]
