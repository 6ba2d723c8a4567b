"""18.16 `ito-tui logs RUN --tail 100000 --json`: lines per second through parse + print.

A run is created on desk_sim, then (desk_sim stopped) its job log is topped up to 10^5
lines through desk_sim's own `LogStore.append` (the log-flood scenario's text,
`joblog_flood.flood_text`, every rank, so the lines are what a flooded run serves), and
desk_sim restarts on that DB nearly frozen. In rotated rounds: the command for all
10^5 lines, the same command for one line (`--tail 1`: start-up, capabilities, one
page: the baseline), and the floor (`bench/logs_floor.py`: the same pages with a bare
`httpx.Client`, `json.loads` and one `json.dumps` per line, no validation). stdout is a
pipe this process reads (and counts: every round must print exactly its lines).

The figure is the command's own work per line: 10^5 lines / (CPU of the 10^5-line run −
CPU of the 1-line run), user + system of the child (`RUSAGE_CHILDREN`), i.e. parse +
print on one core, without start-up and without desk_sim's time serving the pages (on
the other core); the wall-time rate of the whole command and the floor's rate are in
the notes. Target ≥ 100,000 lines/s; the ratio is to the floor measured the same way
(its 10^5-line run minus its 1-line run).
"""

from __future__ import annotations

import resource
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from . import apps
from .context import ROOT, Context, backend
from .live import create_run
from .record import Record
from .stats import summary

TARGET = 100_000.0


def seed(db: Path, run_id: str, total: int) -> int:
    """Top the run's log up to `total` lines with the flood's text; the lines it now has."""
    from ito_tui.desk_sim.joblog_flood import flood_text
    from ito_tui.desk_sim.joblog_store import LogStore
    from ito_tui.desk_sim.store import Store

    store = Store(db)
    try:
        logs = LogStore(store.conn)
        have = int(
            store.conn.execute("SELECT COUNT(*) FROM logs WHERE run_id=?", (run_id,)).fetchone()[0]
        )
        t0 = datetime.now(UTC) - timedelta(hours=1)
        world, batch = 32, 20_000
        for start in range(have, total, batch):
            lines = []
            for i in range(start, min(start + batch, total)):
                when = t0 + timedelta(microseconds=83 * i)  # 12,000 lines/s, as the flood
                rank = i % world
                source, text = flood_text(i, rank, when)
                stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
                node = f"h100-4n-ib-{rank // 8:02d}"
                lines.append(
                    {"ts": stamp, "sim_ts": stamp, "rank": rank, "node": node,
                     "replica_id": f"replica_{rank // 8}", "level": "debug", "source": source,
                     "text": text}
                )  # fmt: skip
            with store.tx():
                logs.append(run_id, lines, line_bytes=4096, retention=total)
        return max(have, total)
    finally:
        store.close()


def _time(argv: list[str], lines: int, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run of `argv`; checks it printed exactly `lines` lines."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise RuntimeError(f"{argv[1:]} exited {res.returncode}: {res.stderr[-500:]!r}")
    got = res.stdout.count(b"\n")
    if got != lines:
        raise RuntimeError(f"{argv[1:]} printed {got} lines, not {lines}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu


def run(ctx: Context) -> list[Record]:
    n = ctx.count(100_000, 5_000)
    rounds = ctx.count(7, 3)
    with tempfile.TemporaryDirectory(prefix="ito-bench-logs-") as tmp:
        db = Path(tmp) / "sim.db"
        with backend(speed=1.0, scenario="happy", db=db) as be:
            run_id = create_run(be)
        t0 = time.perf_counter()
        seed(db, run_id, n)
        ctx.log(f"seeded {n:,} log lines in {time.perf_counter() - t0:.1f} s")
        extra = ["--log-retention", str(n)]
        with backend(speed=0.001, scenario="happy", db=db, extra=extra) as be:
            env = apps.app_env(be)
            floor = [ctx.python, str(ROOT / "bench" / "logs_floor.py"), be.url, run_id]
            cmds = {
                "all": ([ctx.ito_tui, "logs", run_id, "--tail", str(n), "--json"], n),
                "one": ([ctx.ito_tui, "logs", run_id, "--tail", "1", "--json"], 1),
                "floor": ([*floor, str(n)], n),
                "floor_one": ([*floor, "1"], 1),
            }
            for argv, lines in cmds.values():
                _time(argv, lines, env)  # warm-up (page cache, .pyc)
            wall: dict[str, list[float]] = {k: [] for k in cmds}
            cpu: dict[str, list[float]] = {k: [] for k in cmds}
            for r in range(rounds):
                names = list(cmds)
                names = names[r % len(names) :] + names[: r % len(names)]
                for name in names:
                    w, c = _time(*cmds[name], env)
                    wall[name].append(w)
                    cpu[name].append(c)
                ctx.log(
                    f"round {r + 1}/{rounds}: all {wall['all'][-1]:.2f} s wall "
                    f"{cpu['all'][-1]:.2f} s CPU; one {cpu['one'][-1]:.2f} s CPU; "
                    f"floor {cpu['floor'][-1]:.2f} s CPU"
                )
    rates = [n / max(a - b, 1e-9) for a, b in zip(cpu["all"], cpu["one"], strict=True)]
    floor = [n / max(a - b, 1e-9) for a, b in zip(cpu["floor"], cpu["floor_one"], strict=True)]
    wall_rates = [n / w for w in wall["all"]]
    value, base = summary(rates), summary(floor)
    ratio = value["median"] / base["median"]
    note = (
        f"{rounds} rotated rounds of {n:,} lines; CPU of the child (user + system); "
        f"whole command incl. start-up and waiting on desk_sim: "
        f"{summary(wall_rates)['median']:,.0f} lines/s wall "
        f"({summary(wall['all'])['median']:.2f} s); "
        f"`--tail 1`: {summary(cpu['one'])['median'] * 1000:.0f} ms CPU, "
        f"{summary(wall['one'])['median'] * 1000:.0f} ms wall; "
        f"floor (httpx + json.loads + json.dumps per line, no validation; its own 1-line "
        f"run subtracted) {base['median']:,.0f} lines per CPU second"
    )  # fmt: skip
    return [
        Record(
            18,
            "logs_cli",
            f"`ito-tui logs RUN --tail {n:,} --json`, parse + print",
            "lines/s",
            f"≥ {TARGET:,.0f} lines/s",
            value,
            base,
            "floor: bare httpx + json.loads/dumps, per CPU second",
            ratio=ratio,
            met=value["median"] >= TARGET,
            notes=[note],
            sub=".16",
            extra={
                "wall_s": summary(wall["all"]),
                "cpu_s": summary(cpu["all"]),
                "cpu_s_one_line": summary(cpu["one"]),
                "wall_lines_per_s": summary(wall_rates),
            },
        )
    ]
