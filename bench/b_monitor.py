"""#4 monitoring a live run (1 telemetry event/s) for 60 s, and #5 bytes per update.

The real app on the run's pipeline screen (telemetry tab, stage list, event
log) follows the rate proxy's stream at exactly 1 event/s (a stage.progress
every 10th); the minimal app redraws its sparkline and two table cells at
1 Hz. Both run side by side and are measured over the same windows.

`python -m bench.b_monitor A=TREE B=TREE` measures several builds of the app (git
worktrees or `git archive` copies) side by side on one live run, for A/B comparisons
(`measure_builds`).
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import apps
from .context import ROOT, Context
from .live import live_run
from .record import Record
from .stats import summary
from .term import TermProcess, measure_windows


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


# ---------------------------------------------------------------- A/B on one live run


def measure_builds(
    ctx: Context, builds: Sequence[tuple[str, Path]], windows: int, seconds: float
) -> dict[str, dict[str, list[float]]]:
    """#4 and #5 of several builds at once: each build (a tree holding `ito_tui`, run with
    `PYTHONPATH` at it) follows the SAME live run at 1 event/s beside the baseline app, so
    every window is paired across builds and the host's drift hits them alike. Per build:
    CPU (% of a core), bytes per event and the ratio to the baseline, per window."""
    with live_run(ctx, 1.0) as lr:
        base = apps.start_baseline(ctx, "1")
        procs = []
        for _, tree in builds:
            env = apps.app_env(lr.proxy, PYTHONPATH=str(tree))
            argv = [ctx.python, str(ROOT / "bench" / "open_run.py"), lr.run_id]
            procs.append(TermProcess(argv, env=env, cols=apps.COLS, rows=apps.ROWS, cwd=str(tree)))
        every = [base, *procs]
        try:
            markers = [apps.BASELINE_TITLE] + [apps.PIPELINE_MARKER] * len(procs)
            for proc, marker in zip(every, markers, strict=True):
                if proc.wait_marker(marker, 60) is None:
                    raise RuntimeError(f"no first frame: {proc.text()[-400:]!r}")
            time.sleep(3.0)
            out: dict[str, dict[str, list[float]]] = {"baseline": {"cpu": []}}
            out.update({name: {"cpu": [], "bpe": [], "ratio": []} for name, _ in builds})
            for i in range(windows):
                sent0 = lr.sent()
                measured = measure_windows(every, seconds)
                # The proxy counts the events of every follower: each got its share.
                events = max((lr.sent() - sent0) / len(builds), 1.0)
                wb = measured[0]
                out["baseline"]["cpu"].append(100 * wb.cpu_frac)
                line = f"window {i + 1}/{windows}: baseline {100 * wb.cpu_frac:.2f}%"
                for (name, _), w in zip(builds, measured[1:], strict=True):
                    fig = out[name]
                    fig["cpu"].append(100 * w.cpu_frac)
                    fig["bpe"].append(w.bytes / events)
                    fig["ratio"].append(w.cpu_frac / wb.cpu_frac if wb.cpu_frac else math.nan)
                    line += f"; {name} {100 * w.cpu_frac:.2f}% {w.bytes / events:.0f} B/event"
                ctx.log(line)
            if not all(p.alive() for p in procs):
                raise RuntimeError("a build exited during the measurement")
        finally:
            for proc in every:
                proc.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.b_monitor NAME=TREE ... [--windows N] [--seconds S] [--out FILE]`."""
    parser = argparse.ArgumentParser(prog="python -m bench.b_monitor", description=__doc__)
    parser.add_argument("builds", nargs="+", help="NAME=TREE: a tree holding ito_tui")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", type=Path, help="append the figures to this JSON list")
    args = parser.parse_args(argv)
    builds = [(n, Path(t).resolve()) for n, t in (b.split("=", 1) for b in args.builds)]
    for _, tree in builds:
        compileall.compile_dir(str(tree / "ito_tui"), quiet=1, force=True)
    ctx = Context()
    figures = measure_builds(ctx, builds, args.windows, args.seconds)
    for name, fig in figures.items():
        print(name, {k: summary(v) for k, v in fig.items()})
    if args.out is not None:
        runs = json.loads(args.out.read_text()) if args.out.exists() else []
        runs.append(
            {
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "builds": {name: str(tree) for name, tree in builds},
                "windows": args.windows,
                "seconds": args.seconds,
                "loadavg": os.getloadavg(),
                "figures": figures,
            }
        )
        args.out.write_text(json.dumps(runs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
