"""#17 the chart inspector on a run of 10^7 samples per metric: cursor, zoom, pan, memory.

The real app (`bench/open_run.py`, a real pty, 120x36) on one frozen desk_sim run behind
`bench/inspect_server.py`, which answers that run's `GET /telemetry` from a synthetic
history of 10^7 samples in O(max_points) per request (ranges and downsampling included).
The loss chart is reached by Tab (until the footer offers "Inspect") and opened with
Enter; the inspector then fetches the whole run at 2 × its width.

17a, cursor moves (left/right, in turn): key→screen, from the key's write to the first
output chunk after it (a cursor move changes the readout and two columns, one frame).
17b, zooms that fetch: `+` around the cursor, from the whole run down by halves, each
zoom's finer page fetched (`from_step`/`to_step`, `max_points` = 2 × width): from the
key's write to the chunk that completes the title without "fetching…" (the page drawn).
17c, RSS growth over 1,000 zoom/pan steps (`+`, `[`, `]`, `-`, `0` in a fixed mix, one
every ~50 ms, most fetches landing before the next step), after 100 steps of warm-up.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from . import apps
from .context import ROOT, Backend, Context, backend
from .live import _wait_url, create_run, wait_stage
from .record import Record
from .stats import percentile, summary
from .term import TermProcess

SAMPLES = 10_000_000
DONE = "off · raw  "
"""The title once nothing is fetching ("loss · x: step · log-Y off · raw", then blanks);
while a page is on its way it reads "… · raw · fetching…"."""
KEY_LEFT, KEY_RIGHT, KEY_ZOOM, KEY_RESET = b"\x1b[D", b"\x1b[C", b"+", b"0"
MIX = (b"+", b"+", b"[", b"]", b"+", b"-", b"]", b"[", b"-", b"0")
"""The zoom/pan steps of 17c, repeated (zooming in more than out, a reset in ten)."""


@contextmanager
def synthetic_run(ctx: Context) -> Iterator[tuple[str, Backend]]:
    """A frozen desk_sim run in pretrain with the inspect server in front: (run id, proxy)."""
    with tempfile.TemporaryDirectory(prefix="ito-bench-inspect-") as tmp:
        db = Path(tmp) / "sim.db"
        with backend(speed=600.0, scenario="happy", db=db) as fast:
            run_id = create_run(fast)
            wait_stage(fast, run_id, "pretrain")
        with backend(speed=0.001, scenario="happy", db=db) as slow:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bench.inspect_server", "--upstream", slow.url,
                 "--run-id", run_id, "--samples", str(SAMPLES)],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                url = _wait_url(proc)
                yield run_id, Backend(url, slow.token, proc, db)
            finally:
                proc.kill()
                proc.wait(timeout=10)


def _open(ito: TermProcess) -> float:
    """Tab to the charts, Enter on the loss chart: seconds until the whole run is drawn."""
    for _ in range(12):
        if ito.press(b"\t", "Inspect", timeout=1.5) is not None:
            break
    else:
        raise RuntimeError(f"Tab never reached the charts: {ito.text()[-600:]!r}")
    opened = ito.press(b"\r", DONE, timeout=30.0)
    if opened is None:
        raise RuntimeError(f"the inspector did not draw the run: {ito.text()[-800:]!r}")
    return opened


def _cursor(ito: TermProcess, n: int, rng: random.Random) -> tuple[list[float], int]:
    out, missed = [], 0
    for i in range(n):
        lat = ito.press(KEY_LEFT if i % 2 == 0 else KEY_RIGHT, None, timeout=2.0)
        if lat is None:
            missed += 1
        else:
            out.append(1000 * lat)
        time.sleep(rng.uniform(0.05, 0.12))
    return out, missed


def _zooms(ito: TermProcess, rounds: int, depth: int) -> tuple[list[float], int]:
    out, missed = [], 0
    for _ in range(rounds):
        ito.press(KEY_RESET, None, timeout=2.0)
        ito.quiet(0.3, settle_timeout=10)
        for _ in range(depth):
            lat = ito.press(KEY_ZOOM, DONE, timeout=5.0)
            if lat is None:
                missed += 1
            else:
                out.append(1000 * lat)
            ito.quiet(0.15, settle_timeout=10)
    return out, missed


def _steps(ito: TermProcess, n: int) -> None:
    for i in range(n):
        ito.write(MIX[i % len(MIX)])
        time.sleep(0.05)
    ito.press(KEY_RESET, None, timeout=5.0)
    ito.quiet(1.0, settle_timeout=30)


def run(ctx: Context) -> list[Record]:
    presses, rounds, depth = ctx.count(200, 40), ctx.count(8, 3), ctx.count(8, 5)
    steps = ctx.count(1000, 300)
    rng = random.Random(17)
    with synthetic_run(ctx) as (run_id, proxy):
        ito = apps.start_pipeline(ctx, proxy, run_id)
        with ito:
            if ito.wait_marker(apps.PIPELINE_MARKER, 30) is None:
                raise RuntimeError(f"no first frame: {ito.text()[-400:]!r}")
            time.sleep(2.0)
            opened = _open(ito)
            ctx.log(f"inspector open, the whole run drawn {1000 * opened:.0f} ms after Enter")
            ito.quiet(0.5, settle_timeout=10)
            cursor, cursor_missed = _cursor(ito, presses, rng)
            ctx.log(f"cursor p95 {percentile(cursor, 95):.1f} ms ({len(cursor)} presses)")
            zooms, zoom_missed = _zooms(ito, rounds, depth)
            ctx.log(f"fetching zoom p95 {percentile(zooms, 95):.1f} ms ({len(zooms)} zooms)")
            requests0 = _requests(proxy)
            _steps(ito, 100)
            rss0 = ito.rss()
            _steps(ito, steps)
            rss1 = ito.rss()
            requests = _requests(proxy) - requests0
            ctx.log(f"RSS {rss0 / 2**20:.1f} → {rss1 / 2**20:.1f} MiB over {steps} steps")
            if not ito.alive():
                raise RuntimeError("ito-tui exited during the measurement")
    note = (
        f"{SAMPLES:,} synthetic samples (bench/inspect_server.py), the whole run drawn "
        f"{1000 * opened:.0f} ms after Enter; cursor: {len(cursor)} presses, missed "
        f"{cursor_missed}; zooms: {len(zooms)} in {rounds} rounds of {depth} from the whole "
        f"run, missed {zoom_missed}; RSS {rss0 / 2**20:.1f} MiB after 100 warm-up steps, "
        f"{rss1 / 2**20:.1f} MiB after {steps} more, {requests} telemetry requests meanwhile; "
        f"{apps.environ_note()}"
    )
    growth = (rss1 - rss0) / 1e6
    c95, z95 = percentile(cursor, 95), percentile(zooms, 95)
    return [
        Record(17, "inspector", "inspector cursor move key→screen p95 (10^7 samples)", "ms",
               "p95 ≤ 30 ms", summary([c95]), met=c95 <= 30 and not cursor_missed,
               notes=[note], sub="a", extra={"median_ms": summary(cursor)["median"]}),
        Record(17, "inspector", "inspector zoom that fetches, key→page drawn p95", "ms",
               "p95 ≤ 100 ms", summary([z95]), met=z95 <= 100 and not zoom_missed,
               notes=[note], sub="b", extra={"median_ms": summary(zooms)["median"]}),
        Record(17, "inspector", f"RSS growth over {steps} zoom/pan steps", "MB", "≤ 5 MB",
               summary([growth]), summary([rss0 / 1e6]), "RSS after the warm-up (MB)",
               met=growth <= 5, notes=[note], sub="c", extra={"requests": requests}),
    ]  # fmt: skip


def _requests(proxy: Backend) -> int:
    doc = httpx.get(f"{proxy.url}/bench/stats", timeout=10).json()
    return int(doc.get("telemetry_requests", 0))
