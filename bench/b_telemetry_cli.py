"""#19 `ito-tui telemetry RUN --csv` of 10^6 samples: rows per second on one core.

`bench/telemetry_server.py` serves one run of 10^6 real-shaped samples (a desk_sim
sample's fields and its 12 torchtitan metrics, ~810 bytes of JSON each, a NaN every
10,007th) in pages of 5,000, made on request; desk_sim cannot hold 10^6 samples
quickly. In rotated rounds: the command for every sample (`--csv`), the same command
for one (`--to-step 1`: start-up, capabilities, the metric-name survey, one page: the
baseline), and the floor (`bench/telemetry_floor.py`: the same pages with a bare
`httpx.Client`, `json.loads` and the `csv` module, no validation), for all and for one.
stdout is a pipe this process reads and counts (every round must print its rows).

The figure is the command's own work per row: 10^6 rows / (CPU of the 10^6-row run −
CPU of the 1-row run), user + system of the child (`RUSAGE_CHILDREN`): validation of
every sample, the range and order checks, CSV, on one core, without start-up and
without the server's time making the pages (on the other core). The wall-time rate and
the floor's rate are in the notes; the ratio is to the floor measured the same way.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from . import apps
from .context import ROOT, Context
from .record import Record
from .stats import summary

TARGET = 200_000.0
PAGE = 5_000
_LISTENING = re.compile(rb"listening on (http://\S+)")


@contextmanager
def server(samples: int, page: int = PAGE) -> Iterator[str]:
    """Start `bench.telemetry_server`; its URL; SIGKILL on exit."""
    argv = [sys.executable, "-m", "bench.telemetry_server", "--samples", str(samples),
            "--page", str(page)]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    assert proc.stdout is not None
    url: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            m = _LISTENING.search(line)
            if m and not url:
                url.append(m.group(1).decode())

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 30
    while not url and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    try:
        if not url:
            raise RuntimeError("the telemetry server did not start")
        yield url[0]
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _time(argv: list[str], lines: int, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run of `argv`; checks it printed exactly `lines` lines."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(argv, env=env, capture_output=True, timeout=900, check=False)
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
    n = ctx.count(1_000_000, 5_000)
    rounds = ctx.count(5, 2)
    with server(n) as url:
        env = apps.app_env(None, ITO_BACKEND_URL=url, ITO_TOKEN="bench-token")
        floor = [ctx.python, str(ROOT / "bench" / "telemetry_floor.py"), url, "run_bench"]
        cmds = {
            "all": ([ctx.ito_tui, "telemetry", "run_bench", "--csv"], n + 1),
            "one": ([ctx.ito_tui, "telemetry", "run_bench", "--csv", "--to-step", "1"], 2),
            "floor": ([*floor, str(n)], n + 1),
            "floor_one": ([*floor, "1"], 2),
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
    floor_rates = [
        n / max(a - b, 1e-9) for a, b in zip(cpu["floor"], cpu["floor_one"], strict=True)
    ]
    wall_rates = [n / w for w in wall["all"]]
    value, base = summary(rates), summary(floor_rates)
    note = (
        f"{rounds} rotated rounds of {n:,} samples in pages of {PAGE:,}; CPU of the child "
        f"(user + system); whole command incl. start-up and waiting on the server: "
        f"{summary(wall_rates)['median']:,.0f} rows/s wall "
        f"({summary(wall['all'])['median']:.2f} s); one row: "
        f"{summary(cpu['one'])['median'] * 1000:.0f} ms CPU; floor (httpx + json.loads + "
        f"csv, no validation; its own 1-row run subtracted) {base['median']:,.0f} rows per "
        f"CPU second"
    )
    return [
        Record(
            19,
            "telemetry_cli",
            f"`ito-tui telemetry RUN --csv` of {n:,} samples",
            "rows/s",
            f"≥ {TARGET:,.0f} rows/s",
            value,
            base,
            "floor: bare httpx + json.loads + csv, per CPU second",
            ratio=value["median"] / base["median"],
            met=value["median"] >= TARGET,
            notes=[note],
            extra={
                "wall_s": summary(wall["all"]),
                "cpu_s": summary(cpu["all"]),
                "cpu_s_one_row": summary(cpu["one"]),
                "wall_rows_per_s": summary(wall_rates),
            },
        )
    ]
