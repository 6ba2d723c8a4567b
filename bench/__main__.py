"""`python -m bench [--quick] [--out DIR] [NAME ...]`: run benchmarks, print figures, write JSON.

Each benchmark prints its figure and the ratio to its baseline measured in the
same run, then the whole run is written to `bench/results/<YYYY-MM-DD>.json`
(`<YYYY-MM-DD>-quick.json` with `--quick`); records of benchmarks not run this
time are kept from an earlier file of the same day.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import json
import os
import platform
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .context import ROOT, Context
from .record import Record

# name -> (module, targets it reports (issue 8's; #13 issue 22's; 18 issue 18's, whose
# records are 18.13 … 18.16 by their `sub`), one-line description)
BENCHMARKS: dict[str, tuple[str, tuple[int, ...], str]] = {
    "cold_start": ("b_cold_start", (1, 8), "cold start to first painted frame, RSS then"),
    "cli_start": ("b_cli_start", (2,), "`ito-tui --help`, `runs --json` vs `import httpx`"),
    "idle": ("b_idle", (3,), "30 s idle: CPU and bytes to the terminal"),
    "monitor": ("b_monitor", (4, 5), "60 s on a live run at 1 event/s: CPU, bytes/update"),
    "burst": ("b_burst", (6,), "10 telemetry events/s: CPU"),
    "latency": ("b_latency", (7,), "key→screen latency p95, idle and at 10^4 events/s"),
    "series_memory": ("b_series_memory", (9,), "RSS growth 10^3→10^7 samples"),
    "throughput": ("b_throughput", (10,), "parse_event + RunState.apply events/s"),
    "fanout": ("b_fanout", (11,), "desk_sim: 100 SSE watchers, lag p99"),
    "telemetry_query": ("b_telemetry_query", (12,), "GET telemetry max_points=600 at 10^6"),
    "alert_burst": ("b_alerts", (13,), "key→screen latency in 3,000 alerts vs 3,000 events"),
    "logs_flood": (
        "b_logs_flood",
        (18,),
        "18.13/18.14 a 12,000 lines/s log flood, Logs shown/hidden",
    ),
    "nodes_tab": ("b_nodes", (18,), "18.15 Nodes tab, 128 nodes x 8 GPUs every 5 s: CPU, bytes"),
    "logs_cli": ("b_logs_cli", (18,), "18.16 `ito-tui logs --tail 100000 --json` lines/s"),
    "inspector": ("b_inspector", (17,), "17 the chart inspector on 10^7 samples: keys, RSS"),
    "telemetry_cli": ("b_telemetry_cli", (19,), "`ito-tui telemetry RUN --csv` of 10^6 rows/s"),
    "compare": ("b_compare", (18,), "18 two runs overlaid on Telemetry at 1 event/s: CPU vs #4"),
}


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
    }


def byte_compile() -> None:
    """Byte-compile `ito_tui` first, as installing it does.

    An editable install compiles a changed module when it is first imported and keeps
    the result, unless `PYTHONDONTWRITEBYTECODE` is set (it is on some machines, this
    one included): then every start compiles every module changed since the last
    `.pyc` was written, and #1 and #2 measured that compiling (#1 read 1.29× instead of
    1.20×). Textual and the other installed packages are compiled by pip.

    `force`: compileall keeps a `.pyc` whose recorded source mtime (whole seconds)
    matches, while the import system also compares the source size; a file changed twice
    within one second kept a `.pyc` that every start then recompiled in memory (three
    contract modules did, for the first full run of 2026-11-30's fifth session).
    """
    compileall.compile_dir(str(ROOT / "ito_tui"), quiet=1, force=True)


def run_one(name: str, ctx: Context) -> list[Record]:
    module, ids, desc = BENCHMARKS[name]
    print(f"== {name}: {desc}", flush=True)
    t0 = time.perf_counter()
    try:
        mod = importlib.import_module(f"bench.{module}")
        records: list[Record] = mod.run(ctx)
    except Exception as exc:  # a failed benchmark is reported, and the rest still run
        traceback.print_exc()
        why = f"benchmark crashed: {type(exc).__name__}: {exc}"
        records = [Record.unmeasured(i, name, desc, "", why) for i in ids]
    for rec in records:
        rec.extra.setdefault("seconds", round(time.perf_counter() - t0, 1))
        # Other work on the machine shows up here: read figures next to it.
        rec.extra.setdefault("loadavg_at_end", [round(x, 2) for x in os.getloadavg()])
        print(rec.line(), flush=True)
        for note in rec.notes:
            print(f"     note: {note}", flush=True)
    return records


def _order(key: str) -> tuple[int, str]:
    digits = "".join(ch for ch in key if ch.isdigit())
    return int(digits or 0), key


def write_results(records: list[Record], out_dir: Path, quick: bool) -> Path:
    """Merge this run's records into today's results file (by target id)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    path = out_dir / f"{day}{'-quick' if quick else ''}.json"
    old: dict[str, Any] = {}
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = {}
    by_key = {f"{r['id']}{r.get('sub', '')}": r for r in old.get("records", [])}
    for rec in records:
        d = rec.as_json()
        d["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        by_key[rec.key] = d
    doc = {
        "date": day,
        "quick": quick,
        "machine": machine(),
        "records": [by_key[k] for k in sorted(by_key, key=_order)],
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="CI smoke: ~1 minute in total")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--list", action="store_true", help="list benchmarks and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, (_, ids, desc) in BENCHMARKS.items():
            print(f"{name:16} #{','.join(map(str, ids)):6} {desc}")
        return 0
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; see --list")
    names = args.names or list(BENCHMARKS)
    ctx = Context(quick=args.quick)
    byte_compile()
    t0 = time.perf_counter()
    records: list[Record] = []
    for name in names:
        records.extend(run_one(name, ctx))
    path = write_results(records, args.out, args.quick)
    print(f"\n{len(records)} record(s) in {time.perf_counter() - t0:.0f} s -> {path}")
    met = sum(1 for r in records if r.met)
    print(f"targets met: {met}/{len(records)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
