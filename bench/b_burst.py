"""#6 ten telemetry events/s on the pipeline screen, vs the minimal app redrawing at 10 Hz."""

from __future__ import annotations

from .b_monitor import measure_live
from .context import Context
from .record import Record
from .stats import summary


def run(ctx: Context) -> list[Record]:
    f = measure_live(ctx, 10.0, ctx.count(5, 1), ctx.pick(15.0, 3.0))
    cpu, base = summary(f.cpu_ito), summary(f.cpu_base)
    return [
        Record(
            6,
            "burst",
            "pipeline screen at 10 events/s",
            "% core",
            "≤ 15% of a core",
            cpu,
            base,
            "minimal app redrawing at 10 Hz",
            ratio=summary(f.ratios)["median"],
            met=cpu["median"] <= 15.0,
            notes=[f.note, f"bytes/event median {summary(f.bpu_ito)['median']:.0f}"],
        )
    ]
