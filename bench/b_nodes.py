"""18.15 the Nodes tab on a fleet of 128 nodes × 8 GPUs, refreshed every 5 s, plus node events.

The real app on a run's screen (`bench/open_run.py`, a real pty) whose backend is the rate
proxy in front of a frozen desk_sim run: the proxy serves that run's fleet itself, 128
nodes of 8 GPUs whose every counter takes a new sample at each request
(`bench/diagnose_data.py`), and a `straggler.detected` / `straggler.cleared` on the event
stream every 10 s (node 7's straggling toggled in the fleet to match; the Nodes tab asks
for an earlier refresh on a fleet event, never sooner than `limits.fleet_refresh_s`).

In the same process, windows alternate between the Nodes tab (`5`) and the Telemetry tab
(`1`, the run screen with nothing changing: the baseline), 2 s after each switch, so both
see the same machine. Per Nodes window: CPU (% of a core) and bytes written to the pty
per fleet request the proxy answered. Targets: CPU ≤ 3 % of a core, ≤ 4 KB per refresh.
"""

from __future__ import annotations

import time

from . import apps
from .context import Context
from .live import LiveRun, live_run
from .record import Record
from .stats import summary
from .term import TermProcess, measure_windows

NODES_MARKER = "b200-ib-0"
"""A host name of the synthetic fleet: the Nodes tab has painted its rows."""
EVENT_EVERY_S = 10.0


def _window(
    ito: TermProcess, lr: LiveRun, seconds: float, events: bool = True
) -> tuple[float, int, int]:
    """(CPU fraction, bytes, fleet requests) over `seconds`, a fleet event every 10 s."""
    r0 = int(lr.stats()["fleet_requests"])
    cpu, written, left = 0.0, 0, seconds
    while left > 0:
        if events:
            lr.burst(1, "fleet")
        (w,) = measure_windows([ito], min(EVENT_EVERY_S, left))
        cpu += w.cpu_s
        written += w.bytes
        left -= EVENT_EVERY_S
    return cpu / seconds, written, int(lr.stats()["fleet_requests"]) - r0


def run(ctx: Context) -> list[Record]:
    pairs = ctx.count(5, 1)
    seconds = ctx.pick(30.0, 10.0)
    cpu_nodes: list[float] = []
    cpu_base: list[float] = []
    per_refresh: list[float] = []
    refreshes: list[int] = []
    ratios: list[float] = []
    with live_run(ctx, 0.0, proxy_args=("--fleet-nodes", "128")) as lr:
        ito = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        with ito:
            if ito.wait_marker(apps.PIPELINE_MARKER, 30) is None:
                raise RuntimeError(f"no first frame: {ito.text()[-400:]!r}")
            ito.quiet(1.0, settle_timeout=10)
            if ito.press(b"5", NODES_MARKER, timeout=30.0) is None:
                raise RuntimeError(f"the Nodes tab showed no node: {ito.text()[-600:]!r}")
            time.sleep(2.0)
            for p in range(pairs):
                got: dict[str, float] = {}
                for tab in ("nodes", "telemetry") if p % 2 == 0 else ("telemetry", "nodes"):
                    ito.write(b"5" if tab == "nodes" else b"1")
                    time.sleep(2.0)
                    frac, written, asked = _window(ito, lr, seconds)
                    got[tab] = 100 * frac
                    if tab == "nodes":
                        cpu_nodes.append(100 * frac)
                        refreshes.append(asked)
                        per_refresh.append(written / max(asked, 1))
                    else:
                        cpu_base.append(100 * frac)
                        if asked:
                            ctx.log(f"  {asked} fleet requests while the Nodes tab was hidden")
                ratios.append(got["nodes"] / got["telemetry"] if got["telemetry"] else float("nan"))
                ctx.log(
                    f"pair {p + 1}/{pairs} ({seconds:.0f} s each): Nodes {got['nodes']:.2f} % "
                    f"({refreshes[-1]} refreshes, {per_refresh[-1]:,.0f} B each); "
                    f"Telemetry {got['telemetry']:.2f} %"
                )
            # The refreshes alone: one more Nodes window without node events (an event
            # raises an alert, whose toast is painted too).
            ito.write(b"5")
            time.sleep(2.0)
            _, quiet_bytes, quiet_asked = _window(ito, lr, seconds, events=False)
            if not ito.alive():
                raise RuntimeError("ito-tui exited during the measurement")
    cpu, base = summary(cpu_nodes), summary(cpu_base)
    b = summary(per_refresh)
    note = (
        f"{pairs} pairs of {seconds:.0f} s windows in one process, Nodes (5) and Telemetry (1) "
        f"alternating; 128 nodes × 8 GPUs, every counter new at each request; a straggler "
        f"event every {EVENT_EVERY_S:.0f} s; fleet requests per Nodes window {refreshes}; "
        f"one more Nodes window without node events: {quiet_asked} refreshes, "
        f"{quiet_bytes / max(quiet_asked, 1):,.0f} B each; "
        f"{apps.environ_note()}"
    )
    finite = [r for r in ratios if r == r]
    return [
        Record(
            18,
            "nodes_tab",
            "Nodes tab, 128 nodes × 8 GPUs, refreshed every 5 s + node events: CPU",
            "% core",
            "≤ 3% of a core",
            cpu,
            base,
            "same run screen on the Telemetry tab, nothing changing",
            ratio=summary(finite)["median"] if finite else None,
            met=cpu["median"] <= 3.0,
            notes=[note],
            sub=".15a",
        ),
        Record(
            18,
            "nodes_tab",
            "Nodes tab: bytes to the terminal per fleet refresh",
            "B/refresh",
            "≤ 4 KB per refresh",
            b,
            met=b["median"] <= 4000 and min(refreshes, default=0) > 0,
            notes=[note],
            sub=".15b",
        ),
    ]
