"""Benchmark 'fanout' (issue 8 target(s) #11): not written yet."""

from __future__ import annotations

from .context import Context
from .record import Record


def run(ctx: Context) -> list[Record]:
    return [Record.unmeasured(i, "fanout", "fanout", "", "not written yet") for i in (11,)]
