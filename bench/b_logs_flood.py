"""18.13 a job-log flood (12,000 lines/s) on the Logs tab; 18.14 the same flood, Logs hidden.

Two real apps (`bench/open_run.py`, real ptys) on one frozen desk_sim run behind the rate
proxy, whose event stream runs at #4's exact 1 event/s and which serves that run's job log
itself: the simulator's `log-flood` lines (every rank, NCCL / dataloader / FSDP debug
text) on a global clock at 12,000 lines/s (`bench/diagnose_data.py`), whether anyone
reads them or not. App A opens the Logs tab (`4`, caption "following"); app B never does
(#4's set-up, the baseline of 18.14), side by side over the same windows.

18.13, app A following the flood for 60 s (in windows): CPU (% of a core; B's in the same
windows as the baseline), RSS growth from the moment the tab showed (its buffer filling
included) to the end, bytes to the terminal per second against 10 × one screen (one
screen: the bytes of a full repaint of the Logs tab after a resize, flood and events
stopped). Then key→screen latency: `k` (scroll up: "paused") and End ("following") in
turn, timed from the key's write to the chunk that completes the caption, during the
flood and, as the baseline, with it stopped, in alternating blocks.

18.14, app A back on the Telemetry tab (`1`, after the Logs tab was open): CPU against B
in the same windows (target ≤ 1.5×), and how many log lines the proxy sent meanwhile.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time

from . import apps
from .context import Context
from .live import LiveRun, live_run
from .procstat import cpu_seconds
from .record import Record
from .stats import percentile, summary
from .term import TermProcess, measure_windows

FLOOD = 12_000.0
KEY_UP, KEY_END = b"k", b"\x1b[F"


def _screen_bytes(ito: TermProcess, lr: LiveRun) -> int:
    """Bytes of one full repaint of what `ito` shows (everything stopped, then a resize)."""
    lr.set_log_rate(0.0)
    lr.set_rate(0.0)
    ito.quiet(1.0, settle_timeout=30)
    sizes = []
    for cols in (apps.COLS - 1, apps.COLS):
        before = ito.bytes_total
        if ito.resize(cols, apps.ROWS) is None:
            raise RuntimeError("the app did not repaint after a resize")
        ito.quiet(1.0, settle_timeout=10)
        sizes.append(ito.bytes_total - before)
    return sizes[-1]


def _presses(ito: TermProcess, n: int) -> tuple[list[float], int]:
    """`k` then End, n presses in all: latencies (ms) and presses with no effect in 2 s."""
    out, missed = [], 0
    rng = random.Random(13)
    for i in range(n):
        key, marker = (KEY_UP, "paused") if i % 2 == 0 else (KEY_END, "following")
        lat = ito.press(key, marker, timeout=2.0)
        if lat is None:
            missed += 1
        else:
            out.append(1000 * lat)
        time.sleep(rng.uniform(0.08, 0.2))
    if n % 2:
        ito.press(KEY_END, "following", timeout=2.0)
    return out, missed


def run(ctx: Context) -> list[Record]:
    windows, seconds = ctx.count(3, 2), ctx.pick(20.0, 4.0)
    presses, blocks = ctx.count(40, 8), ctx.count(4, 2)
    f: dict[str, list[float]] = {k: [] for k in ("cpu_a", "cpu_b", "bps", "hidden_a",
                                                  "hidden_b", "hidden_ratio")}  # fmt: skip
    lat: dict[str, list[float]] = {"flood": [], "idle": []}
    p95: dict[str, list[float]] = {"flood": [], "idle": []}
    missed = {"flood": 0, "idle": 0}
    with live_run(ctx, 1.0, proxy_args=("--log-rate", "0")) as lr:
        a = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        b = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        with a, b:
            for proc in (a, b):
                if proc.wait_marker(apps.PIPELINE_MARKER, 30) is None:
                    raise RuntimeError(f"no first frame: {proc.text()[-400:]!r}")
            time.sleep(3.0)
            if a.press(b"4", "following", timeout=30.0) is None:
                raise RuntimeError(f"the Logs tab does not say 'following': {a.text()[-600:]!r}")
            rss0 = a.rss()
            lr.set_log_rate(FLOOD)
            sent0, t0 = lr.stats()["log_sent"], time.perf_counter()
            rss_max = rss0
            for i in range(windows):
                wa, wb = measure_windows([a, b], seconds)
                rss_max = max(rss_max, a.rss())
                f["cpu_a"].append(100 * wa.cpu_frac)
                f["cpu_b"].append(100 * wb.cpu_frac)
                f["bps"].append(wa.bytes_per_s)
                ctx.log(
                    f"flood window {i + 1}/{windows}: Logs {100 * wa.cpu_frac:.1f} % "
                    f"{wa.bytes_per_s:,.0f} B/s, RSS {a.rss() / 2**20:.1f} MiB; "
                    f"#4 set-up {100 * wb.cpu_frac:.2f} %"
                )
            end = lr.stats()
            rate = (end["log_sent"] - sent0) / (time.perf_counter() - t0)
            behind = int(end["log_seq"]) - int(end["log_last_sent"])
            rss1 = a.rss()
            for blk in range(blocks):
                for mode in ("flood", "idle") if blk % 2 == 0 else ("idle", "flood"):
                    lr.set_log_rate(FLOOD if mode == "flood" else 0.0)
                    time.sleep(1.0)
                    if mode == "idle":  # the flood's backlog painted first
                        a.quiet(0.5, settle_timeout=10)
                    got, miss = _presses(a, presses // blocks)
                    lat[mode] += got
                    missed[mode] += miss
                    p95[mode].append(percentile(got, 95))
                ctx.log(
                    f"keys block {blk + 1}/{blocks}: p95 flood {p95['flood'][-1]:.1f} ms, "
                    f"idle {p95['idle'][-1]:.1f} ms"
                )
            screen = _screen_bytes(a, lr)
            ctx.log(f"one full repaint of the Logs tab: {screen:,} B")
            lr.set_rate(1.0)
            a.write(b"1")
            time.sleep(2.0)
            lr.set_log_rate(FLOOD)
            streams = lr.stats()["log_streams"]
            sent0 = lr.stats()["log_sent"]
            for i in range(windows):
                wa, wb = measure_windows([a, b], seconds)
                f["hidden_a"].append(100 * wa.cpu_frac)
                f["hidden_b"].append(100 * wb.cpu_frac)
                f["hidden_ratio"].append(wa.cpu_frac / wb.cpu_frac if wb.cpu_frac else float("nan"))
                ctx.log(
                    f"hidden window {i + 1}/{windows}: Telemetry after Logs "
                    f"{100 * wa.cpu_frac:.2f} %, #4 set-up {100 * wb.cpu_frac:.2f} %"
                )
            hidden_sent = lr.stats()["log_sent"] - sent0
            control = _cli_follow(ctx, lr, seconds)
            for proc in (a, b):
                if not proc.alive():
                    raise RuntimeError("ito-tui exited during the measurement")
    return _records(ctx, f, lat, p95, missed, screen, rss0, rss1, rss_max, rate, behind,
                    streams, hidden_sent, windows, seconds, control)  # fmt: skip


def _cli_follow(ctx: Context, lr: LiveRun, seconds: float) -> str:
    """The same flood read by `ito-tui logs RUN --follow --json` (a control: does the
    stream itself keep up?): lines/s it printed, its CPU, how far behind it ended."""
    proc = subprocess.Popen(
        [ctx.ito_tui, "logs", lr.run_id, "--follow", "--tail", "0", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=apps.app_env(lr.proxy),
    )  # fmt: skip
    assert proc.stdout is not None
    out = proc.stdout
    count = [0]

    def drain() -> None:
        for _ in out:
            count[0] += 1

    threading.Thread(target=drain, daemon=True).start()
    try:
        time.sleep(3.0)  # start-up and the first lines
        n0, c0 = count[0], cpu_seconds(proc.pid)
        time.sleep(seconds)
        n1, c1, end = count[0], cpu_seconds(proc.pid), lr.stats()
    finally:
        proc.kill()
        proc.wait(timeout=10)
    behind = int(end["log_seq"]) - int(end["log_last_sent"])
    text = (
        f"control: `ito-tui logs RUN --follow --json` on the same flood printed "
        f"{(n1 - n0) / seconds:,.0f} lines/s at {100 * (c1 - c0) / seconds:.0f} % of a core, "
        f"{behind:,} lines behind at the end"
    )
    ctx.log(text)
    return text


def _records(
    ctx: Context,
    f: dict[str, list[float]],
    lat: dict[str, list[float]],
    p95: dict[str, list[float]],
    missed: dict[str, int],
    screen: int,
    rss0: int,
    rss1: int,
    rss_max: int,
    rate: float,
    behind: int,
    streams: int,
    hidden_sent: int,
    windows: int,
    seconds: float,
    control: str,
) -> list[Record]:
    flood_p95, idle_p95 = percentile(lat["flood"], 95), percentile(lat["idle"], 95)
    growth = (rss1 - rss0) / 1e6
    bps = summary(f["bps"])
    limit = 10 * screen
    ratios = [r for r in f["hidden_ratio"] if r == r]
    hidden = summary(ratios)["median"] if ratios else float("nan")
    flooded = rate >= 10_000  # the condition of 18.13: without it nothing is met
    note = (
        f"flood {rate:,.0f} lines/s delivered by the proxy while measured, the reader "
        f"{behind:,} lines behind the flood's clock at the end; {windows} windows "
        f"of {seconds:.0f} s side by side with the #4 set-up (1 event/s, never on Logs); "
        f"RSS {rss0 / 2**20:.1f} MiB when the tab showed, {rss1 / 2**20:.1f} MiB after "
        f"{windows * seconds:.0f} s (max {rss_max / 2**20:.1f}); one repaint {screen:,} B; "
        f"keys: {len(lat['flood'])} presses in the flood, {len(lat['idle'])} without, missed "
        f"{missed}; {control}; {apps.environ_note()}"
    )
    return [
        Record(18, "logs_flood", "key→screen p95 on the Logs tab in a 12,000 lines/s flood",
               "ms", "p95 ≤ 60 ms", summary(p95["flood"]), summary(p95["idle"]),
               "same keys, flood stopped (p95 per block)",
               ratio=flood_p95 / idle_p95 if idle_p95 else None,
               met=flooded and flood_p95 <= 60 and missed["flood"] == 0, notes=[note], sub=".13a",
               extra={"p95_all_presses_ms": flood_p95, "p95_idle_all_ms": idle_p95}),
        Record(18, "logs_flood", f"RSS growth over {windows * seconds:.0f} s of flood on the "
               "Logs tab", "MB", "≤ 10 MB", summary([growth]), summary([rss0 / 1e6]),
               "RSS when the tab showed (MB)", met=flooded and growth <= 10, notes=[note],
               sub=".13b"),
        Record(18, "logs_flood", "CPU on the Logs tab in the flood", "% core", "≤ 30% of a core",
               summary(f["cpu_a"]), summary(f["cpu_b"]),
               "#4 set-up in the same windows",
               ratio=summary(f["cpu_a"])["median"] / max(summary(f["cpu_b"])["median"], 1e-9),
               met=flooded and summary(f["cpu_a"])["median"] <= 30, notes=[note], sub=".13c"),
        Record(18, "logs_flood", "bytes to the terminal in the flood", "B/s",
               "≤ 10 Hz × one screen", bps, summary([float(limit)]),
               "10 × one full repaint of the Logs tab",
               ratio=bps["median"] / limit if limit else None,
               met=flooded and bool(limit) and bps["median"] <= limit, notes=[note],
               sub=".13d"),
        Record(18, "logs_flood", "the flood with the Telemetry tab on screen (Logs hidden): CPU",
               "% core", "≤ 1.5× #4", summary(f["hidden_a"]), summary(f["hidden_b"]),
               "#4 set-up in the same windows", ratio=hidden,
               met=hidden == hidden and hidden <= 1.5, notes=[note + (
                   f"; log streams open when Logs was hidden: {streams}, lines sent to them "
                   f"while measured: {hidden_sent:,}")], sub=".14",
               extra={"lines_sent_hidden": hidden_sent}),
    ]  # fmt: skip
