"""#7 key→screen latency p95 in a real pty: idle, and while 10^4 events/s stream in.

The key is `w` on the pipeline screen, which cycles the telemetry window; its
effect is the caption "window: <label>", so the measured time runs from the
write of the key to the pty until the chunk that completes that text arrives
(other redraws in between do not count). Presses are spaced 80–200 ms apart.
The minimal app's cursor-down latency (any output) is reported for reference.
"""

from __future__ import annotations

import random
import time

from . import apps
from .context import Context
from .live import live_run
from .record import Record
from .stats import percentile, summary
from .term import TermProcess


def _presses(proc: TermProcess, n: int, start_index: int) -> tuple[list[float], int]:
    """Press `w` n times; latencies (s) and how many presses showed no effect in 2 s."""
    out, missed, idx = [], 0, start_index
    rng = random.Random(7)
    for _ in range(n):
        idx = (idx + 1) % len(apps.WINDOW_LABELS)
        lat = proc.press(b"w", f"window: {apps.WINDOW_LABELS[idx]}", timeout=2.0)
        if lat is None:
            missed += 1
        else:
            out.append(lat)
        time.sleep(rng.uniform(0.08, 0.2))
    return out, missed


def run(ctx: Context) -> list[Record]:
    n = ctx.count(60, 12)
    blocks = ctx.count(5, 2)
    load_rate = 10_000.0
    idle: list[float] = []
    loaded: list[float] = []
    p95_idle: list[float] = []
    p95_loaded: list[float] = []
    missed = {"idle": 0, "loaded": 0}
    base_lat: list[float] = []
    with live_run(ctx, 0.0) as lr:
        ito = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        with ito:
            if ito.wait_marker(apps.PIPELINE_MARKER, 30) is None:
                raise RuntimeError(f"no first frame: {ito.text()[-400:]!r}")
            ito.quiet(1.0, settle_timeout=10)
            index = 0
            per = n // blocks
            # Alternate idle and loaded blocks so both see the same machine.
            for b in range(blocks):
                lr.set_rate(0.0)
                time.sleep(1.0)
                ito.quiet(0.5, settle_timeout=10)
                lat, miss = _presses(ito, per, index)
                index = (index + per) % len(apps.WINDOW_LABELS)
                idle += lat
                missed["idle"] += miss
                p95_idle.append(1000 * percentile(lat, 95))
                sent0 = lr.sent()
                lr.set_rate(load_rate)
                time.sleep(2.0)
                lat, miss = _presses(ito, per, index)
                index = (index + per) % len(apps.WINDOW_LABELS)
                loaded += lat
                missed["loaded"] += miss
                p95_loaded.append(1000 * percentile(lat, 95))
                ctx.log(
                    f"block {b + 1}/{blocks}: idle p95 {p95_idle[-1]:.1f} ms; at "
                    f"{load_rate:.0f} ev/s (sent {lr.sent() - sent0}) p95 {p95_loaded[-1]:.1f} ms"
                )
            lr.set_rate(0.0)
            if not ito.alive():
                raise RuntimeError("ito-tui exited during the measurement")
    base = apps.start_baseline(ctx, "idle")
    with base:
        base.wait_marker(apps.BASELINE_TITLE, 30)
        base.quiet(0.5, settle_timeout=5)
        for _ in range(per):
            lat_b = base.press(b"\x1b[B", None, timeout=2.0)
            if lat_b is not None:
                base_lat.append(1000 * lat_b)
            base.quiet(0.05, settle_timeout=1)
    all_idle = 1000 * percentile(idle, 95)
    all_loaded = 1000 * percentile(loaded, 95)
    note = (
        f"`w` on the pipeline screen, {len(idle)} idle and {len(loaded)} loaded presses in "
        f"{blocks} alternating blocks; missed (no effect within 2 s): {missed}; "
        f"p95 over all presses: idle {all_idle:.1f} ms, loaded {all_loaded:.1f} ms; "
        f"minimal app cursor-down p95 {percentile(base_lat, 95):.1f} ms"
    )
    vi, vl = summary(p95_idle), summary(p95_loaded)
    return [
        Record(
            7,
            "latency",
            "key→screen latency p95, idle",
            "ms",
            "p95 ≤ 25 ms",
            vi,
            summary(base_lat),
            "minimal app, cursor-down (all presses)",
            met=all_idle <= 25 and missed["idle"] == 0,
            notes=[note],
            sub="a",
            extra={"p95_all_presses_ms": all_idle},
        ),
        Record(
            7,
            "latency",
            f"key→screen latency p95 at {load_rate:.0e} events/s",
            "ms",
            "p95 ≤ 60 ms",
            vl,
            vi,
            "same app idle (p95 per block)",
            ratio=vl["median"] / vi["median"] if vi["median"] else None,
            met=all_loaded <= 60 and missed["loaded"] == 0,
            notes=[note],
            sub="b",
            extra={"p95_all_presses_ms": all_loaded},
        ),
    ]
