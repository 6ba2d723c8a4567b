"""#4 monitoring a live run (1 telemetry event/s) for 60 s, and #5 bytes per update.

The real app on the run's pipeline screen (telemetry tab, stage list, event
log) follows the rate proxy's stream at exactly 1 event/s (a stage.progress
every 10th); the minimal app redraws its sparkline and two table cells at
1 Hz. Both run side by side and are measured over the same windows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from . import apps
from .context import Context
from .live import live_run
from .record import Record
from .stats import summary
from .term import measure_windows


@dataclass
class LiveFigures:
    cpu_ito: list[float]
    cpu_base: list[float]
    bpu_ito: list[float]
    bpu_base: list[float]
    ratios: list[float]
    note: str


def measure_live(ctx: Context, rate: float, windows: int, seconds: float) -> LiveFigures:
    """CPU (% of a core) and bytes per update of the app at `rate` events/s vs the
    baseline redrawing at `rate` Hz, over paired windows."""
    hz = f"{rate:g}"
    with live_run(ctx, rate) as lr:
        base = apps.start_baseline(ctx, hz)
        ito = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        with base, ito:
            for proc, marker in ((base, apps.BASELINE_TITLE), (ito, apps.PIPELINE_MARKER)):
                if proc.wait_marker(marker, 30) is None:
                    raise RuntimeError(f"no first frame: {proc.text()[-400:]!r}")
            ctx.log("both painted; letting the pipeline load its backfill")
            time.sleep(3.0)
            figs = LiveFigures([], [], [], [], [], "")
            for i in range(windows):
                sent0 = lr.sent()
                wb, wi = measure_windows([base, ito], seconds)
                events = lr.sent() - sent0
                ticks = seconds * rate
                figs.cpu_base.append(100 * wb.cpu_frac)
                figs.cpu_ito.append(100 * wi.cpu_frac)
                figs.bpu_base.append(wb.bytes / ticks)
                figs.bpu_ito.append(wi.bytes / max(events, 1))
                figs.ratios.append(wi.cpu_frac / wb.cpu_frac if wb.cpu_frac else float("nan"))
                ctx.log(
                    f"window {i + 1}/{windows} ({seconds:.0f} s, {events} events): "
                    f"baseline {100 * wb.cpu_frac:.2f}% {wb.bytes / ticks:.0f} B/update; "
                    f"ito-tui {100 * wi.cpu_frac:.2f}% {wi.bytes / max(events, 1):.0f} B/event"
                )
            if not ito.alive():
                raise RuntimeError("ito-tui exited during the measurement")
    figs.note = (
        f"{windows} windows of {seconds:.0f} s side by side; app CPU includes its threads; "
        f"{apps.environ_note()}"
    )
    return figs


def run(ctx: Context) -> list[Record]:
    f = measure_live(ctx, 1.0, ctx.count(5, 1), ctx.pick(60.0, 4.0))
    cpu, base = summary(f.cpu_ito), summary(f.cpu_base)
    r = summary(f.ratios)["median"]
    bpu = summary(f.bpu_ito)
    bpu_ratio = bpu["median"] / summary(f.bpu_base)["median"]
    return [
        Record(
            4,
            "monitor",
            "monitoring a live run at 1 event/s",
            "% core",
            "≤ 2% of a core and ≤ 0.4× baseline",
            cpu,
            base,
            "minimal app redrawing sparkline + 2 cells at 1 Hz",
            ratio=r,
            met=cpu["median"] <= 2.0 and r <= 0.4,
            notes=[f.note],
        ),
        Record(
            5,
            "monitor",
            "bytes to the terminal per update (1 event/s)",
            "B/update",
            "≤ 2 KB per update",
            bpu,
            summary(f.bpu_base),
            "minimal app, bytes per 1 Hz redraw",
            ratio=bpu_ratio,
            met=bpu["median"] <= 2000,
            notes=[f.note],
        ),
    ]
