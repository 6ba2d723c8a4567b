"""#10: events/s through `parse_event` + `RunState.apply` on one core (no baseline)."""

from __future__ import annotations

import time

from .context import Context
from .events import stream
from .record import Record
from .stats import summary

TARGET = 50_000.0


def run(ctx: Context) -> list[Record]:
    from ito_tui.contract import parse_event
    from ito_tui.state import RunState

    n = ctx.count(200_000, 20_000)
    rounds = ctx.count(7, 5)
    ctx.log(f"building {n} synthetic events")
    raw = stream("run_bench", n)
    rates = []
    for r in range(rounds):
        state = RunState.empty("run_bench")
        t0 = time.perf_counter()
        for body in raw:
            state = state.apply(parse_event(body))
        dt = time.perf_counter() - t0
        assert state.last_seq == n, "every event must have been applied"
        rates.append(n / dt)
        ctx.log(f"round {r + 1}/{rounds}: {n / dt:,.0f} events/s")
    value = summary(rates)
    rec = Record(
        10,
        "throughput",
        "parse_event + RunState.apply",
        "events/s",
        f"≥ {TARGET:,.0f} events/s",
        value,
        met=value["median"] >= TARGET,
        notes=[f"{n} events per round (90% telemetry, 10% stage.progress), one thread"],
    )
    parse_only = []
    for _ in range(3):
        t0 = time.perf_counter()
        for body in raw:
            parse_event(body)
        parse_only.append(n / (time.perf_counter() - t0))
    rec.extra["parse_only_events_per_s"] = summary(parse_only)
    return [rec]
