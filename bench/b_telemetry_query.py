"""Benchmark 'telemetry_query' (issue 8 target(s) #12): not written yet."""

from __future__ import annotations

from .context import Context
from .record import Record


def run(ctx: Context) -> list[Record]:
    return [
        Record.unmeasured(i, "telemetry_query", "telemetry_query", "", "not written yet")
        for i in (12,)
    ]
