"""#3 idle: connected, nothing arriving; CPU and bytes written to the terminal.

The minimal app (idle) and `ito-tui` on its booking picker (bookings loaded,
then left alone) run side by side and are measured over the same windows, so
both see the same machine noise.
"""

from __future__ import annotations

from . import apps
from .context import Context, backend
from .record import Record
from .stats import ratio, summary
from .term import measure_windows


def run(ctx: Context) -> list[Record]:
    windows = ctx.count(5, 1)
    seconds = ctx.pick(30.0, 3.0)
    with backend(speed=1.0) as be:
        base, ito = apps.start_baseline(ctx, "idle"), apps.start_ito(ctx, be)
        with base, ito:
            for proc, marker in ((base, apps.BASELINE_TITLE), (ito, apps.PICKER_MARKER)):
                if proc.wait_marker(marker, 30) is None:
                    raise RuntimeError(f"no first frame: {proc.text()[-300:]!r}")
            # Let the picker load its bookings and finish painting before measuring rest.
            ito.quiet(2.0, settle_timeout=20)
            base.quiet(1.0, settle_timeout=10)
            cpu: dict[str, list[float]] = {"base": [], "ito": []}
            bps: dict[str, list[float]] = {"base": [], "ito": []}
            for i in range(windows):
                wb, wi = measure_windows([base, ito], seconds)
                cpu["base"].append(100 * wb.cpu_frac)
                cpu["ito"].append(100 * wi.cpu_frac)
                bps["base"].append(wb.bytes_per_s)
                bps["ito"].append(wi.bytes_per_s)
                ctx.log(
                    f"window {i + 1}/{windows} ({seconds:.0f} s): baseline "
                    f"{100 * wb.cpu_frac:.2f}% {wb.bytes_per_s:.0f} B/s; ito-tui "
                    f"{100 * wi.cpu_frac:.2f}% {wi.bytes_per_s:.0f} B/s"
                )
    c, b = summary(cpu["ito"]), summary(bps["ito"])
    note = f"{windows} windows of {seconds:.0f} s, measured side by side; {apps.environ_note()}"
    return [
        Record(
            3,
            "idle",
            "idle CPU (booking picker, connected)",
            "% core",
            "≤ 0.5% of a core and 0 B/s",
            c,
            summary(cpu["base"]),
            "minimal app idle",
            ratio=ratio(c["median"], summary(cpu["base"])["median"]),
            met=c["median"] <= 0.5 and b["max"] == 0,
            notes=[note],
            sub="a",
        ),
        Record(
            3,
            "idle",
            "idle bytes to the terminal",
            "B/s",
            "0 B/s",
            b,
            summary(bps["base"]),
            "minimal app idle",
            met=b["max"] == 0,
            notes=[note],
            sub="b",
        ),
    ]
