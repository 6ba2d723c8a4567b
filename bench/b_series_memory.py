"""#9 RSS growth of TelemetrySeries + the pipeline's telemetry panel, 10^3 → 10^7 samples.

Each run is a fresh `python -m bench.series_probe` (headless Textual app with
the panel mounted, every non-RL metric fed one sample per step); RSS is read
after a repaint and a GC at each checkpoint. Two probes run at a time (RSS
does not depend on CPU contention).
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

from .context import ROOT, Context
from .record import Record
from .stats import summary

METRICS = "loss,tokens_per_s_per_gpu,mfu,spend_usd"
"""Fed to 10^7 each; the panel's other series stay empty (growth is per series, and
four keep the run under three minutes)."""
MB = 1e6
MIB = 2**20


def _probe(ctx: Context, max_n: int) -> dict[int, int]:
    res = subprocess.run(
        [ctx.python, "-m", "bench.series_probe", "--max", str(max_n), "--metrics", METRICS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return {d["n"]: d["rss"] for d in map(json.loads, res.stdout.splitlines())}


def run(ctx: Context) -> list[Record]:
    max_n = ctx.count(10_000_000, 100_000)
    runs = ctx.count(5, 2)
    mid = max_n // 2  # 5×10^6 of 10^7 (a checkpoint)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: _probe(ctx, max_n), range(runs)))
    growth, tail, base = [], [], []
    lo_key, mid_key = 1_000, max(k for k in results[0] if k <= mid)
    for i, rss in enumerate(results):
        growth.append((rss[max_n] - rss[lo_key]) / MB)
        tail.append((rss[max_n] - rss[mid_key]) / MIB)
        base.append(rss[lo_key] / MIB)
        ctx.log(
            f"run {i + 1}/{runs}: RSS at 10^3 {rss[lo_key] / MIB:.1f} MiB; "
            + ", ".join(f"{n:.0e}: {v / MIB:.1f}" for n, v in sorted(rss.items()))
        )
    g, t = summary(growth), summary(tail)
    note = f"{runs} fresh processes; {METRICS} fed one sample per step each; panel repainted"
    return [
        Record(
            9,
            "series_memory",
            f"RSS growth 10^3 → {max_n:.0e} samples/metric",
            "MB",
            "≤ 5 MB",
            g,
            summary(base),
            "RSS at 10^3 samples (MiB)",
            met=g["median"] <= 5.0,
            notes=[note],
            sub="a",
        ),
        Record(
            9,
            "series_memory",
            f"RSS growth {mid_key:.0e} → {max_n:.0e} samples/metric",
            "MiB",
            "≤ 1 MiB",
            t,
            met=t["median"] <= 1.0,
            notes=[note],
            sub="b",
        ),
    ]
