"""Benchmark 'latency' (issue 8 target(s) #7): not written yet."""

from __future__ import annotations

from .context import Context
from .record import Record


def run(ctx: Context) -> list[Record]:
    return [Record.unmeasured(i, "latency", "latency", "", "not written yet") for i in (7,)]
