"""#18 two runs overlaid on the Telemetry tab at 1 event/s: CPU against #4's set-up.

Two real apps (`bench/open_run.py`, each in its own 120×36 pty) follow the same live run
behind the rate proxy at exactly 1 event/s, as #4 does. Before desk_sim is frozen it also
holds a finished `happy` run (`--history happy`, the demo's previous run): app B presses
`c` and Enter on the picker (the other run, highlighted), and draws it on every chart,
aligned by tokens seen; app A is #4's run screen alone. Both are measured over the same
windows; the figure is B's CPU (% of a core), its ratio to A's per window (paired: the
machine's noise hits both). Target: ≤ 1.3 × #4.
"""

from __future__ import annotations

import time

from . import apps
from .context import Context
from .live import live_run
from .record import Record
from .stats import summary
from .term import measure_windows

LEGEND = "(by tokens)"
"""The Telemetry caption's legend once the reference is drawn."""


def run(ctx: Context) -> list[Record]:
    windows = ctx.count(5, 1)
    seconds = ctx.pick(60.0, 6.0)
    cpu_ref: list[float] = []
    cpu_alone: list[float] = []
    ratios: list[float] = []
    with live_run(ctx, 1.0, history="happy") as lr:
        alone = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        both = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        with alone, both:
            for proc in (alone, both):
                if proc.wait_marker(apps.PIPELINE_MARKER, 60) is None:
                    raise RuntimeError(f"no first frame: {proc.text()[-400:]!r}")
            both.quiet(1.0, settle_timeout=10)
            if both.press(b"c", "Enter draws it beside", timeout=30.0) is None:
                raise RuntimeError(f"no run picker: {both.text()[-600:]!r}")
            if both.press(b"\r", LEGEND, timeout=30.0) is None:
                raise RuntimeError(f"no reference drawn: {both.text()[-600:]!r}")
            # The line itself (two cells of it), not only the legend and the value column.
            drawn = any(both.wait_marker(m, 10) is not None for m in ("╌╌", "┄┄"))
            if not drawn:
                raise RuntimeError(
                    f"the reference's line is not on the charts: {both.text()[-600:]!r}"
                )
            ctx.log("the reference is drawn; letting both settle")
            time.sleep(3.0)
            for i in range(windows):
                sent0 = lr.sent()
                wa, wb = measure_windows([alone, both], seconds)
                events = (lr.sent() - sent0) / 2  # the proxy counts both followers' events
                cpu_alone.append(100 * wa.cpu_frac)
                cpu_ref.append(100 * wb.cpu_frac)
                ratios.append(wb.cpu_frac / wa.cpu_frac if wa.cpu_frac else float("nan"))
                ctx.log(
                    f"window {i + 1}/{windows} ({seconds:.0f} s, {events:.0f} events each): "
                    f"alone {100 * wa.cpu_frac:.2f}%, with the reference {100 * wb.cpu_frac:.2f}%"
                )
            for proc in (alone, both):
                if not proc.alive():
                    raise RuntimeError("ito-tui exited during the measurement")
    cpu, base = summary(cpu_ref), summary(cpu_alone)
    finite = [r for r in ratios if r == r]
    ratio = summary(finite)["median"] if finite else float("nan")
    note = (
        f"{windows} windows of {seconds:.0f} s, both apps side by side on one live run at "
        f"1 event/s; the reference is desk_sim's finished happy run (fetched once: it has "
        f"ended), aligned by tokens; {apps.environ_note()}"
    )
    return [
        Record(
            18,
            "compare",
            "two runs overlaid on the Telemetry tab at 1 event/s: CPU",
            "% core",
            "≤ 1.3× #4 (the same screen without a reference, same windows)",
            cpu,
            base,
            "#4's set-up: the run screen without a reference, in the same windows",
            ratio=ratio,
            met=ratio <= 1.3,
            notes=[note],
        )
    ]
