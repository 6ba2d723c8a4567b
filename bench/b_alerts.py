"""#13 key→screen latency during a burst of 3,000 alerts, vs during 3,000 ordinary events.

The real app on a run's pipeline screen (a real pty, `bench/open_run.py`) gets, from the
rate proxy, 3,000 `slo.breached` events in one write (each one an alert: toast, bell,
terminal title) or 3,000 events of the usual telemetry mix (none an alert), alternating,
one burst per round. `w` is pressed as soon as the app writes its first output after the
burst was asked for (it paints while it applies the burst, so the key lands in it); the
latency runs from the key's write to the pty until the chunk that completes
"window: <label>" (as #7). The app's CPU from the burst until it is quiet and idle again
(6 s at least: a toast lives 5 s) is reported next to it.
"""

from __future__ import annotations

import time

from . import apps
from .context import Context
from .live import LiveRun, live_run
from .record import Record
from .stats import summary
from .term import TermProcess

BURST = 3_000
SETTLE_S = 6.0


def _settle(ito: TermProcess, timeout: float = 180.0) -> None:
    """Wait until the app writes nothing for 1 s and uses < 5 % of a core over 1 s.

    Output alone is not enough: work left over from a burst (toasts expiring) can keep a
    core busy without writing, and would be billed to the next round.
    """
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        ito.quiet(1.0, settle_timeout=max(deadline - time.perf_counter(), 1.0))
        c0 = ito.cpu()
        time.sleep(1.0)
        if ito.cpu() - c0 < 0.05:
            return


def _round(ito: TermProcess, lr: LiveRun, kind: str, index: int) -> tuple[float | None, float]:
    """One burst of `kind`: (latency of `w` in s or None when it showed nothing, CPU s)."""
    _settle(ito)
    c0, t0 = ito.cpu(), time.perf_counter()
    lr.burst(BURST, kind)
    if ito.wait_output(10.0) is None:
        raise RuntimeError(f"the app showed nothing of a burst of {BURST} ({kind})")
    lat = ito.press(b"w", f"window: {apps.WINDOW_LABELS[index]}", timeout=60.0)
    time.sleep(max(0.0, t0 + SETTLE_S - time.perf_counter()))
    _settle(ito)
    return lat, ito.cpu() - c0


def run(ctx: Context) -> list[Record]:
    rounds = ctx.count(5, 1)
    lat: dict[str, list[float]] = {"slo": [], "ordinary": []}
    cpu: dict[str, list[float]] = {"slo": [], "ordinary": []}
    ratios: list[float] = []
    missed = {"slo": 0, "ordinary": 0}
    with live_run(ctx, 0.0) as lr:
        ito = apps.start_pipeline(ctx, lr.proxy, lr.run_id)
        with ito:
            if ito.wait_marker(apps.PIPELINE_MARKER, 30) is None:
                raise RuntimeError(f"no first frame: {ito.text()[-400:]!r}")
            ito.quiet(1.0, settle_timeout=10)
            index = 0
            for r in range(rounds):
                # Alternate which kind goes first, so neither always follows the other.
                kinds = ("ordinary", "slo") if r % 2 == 0 else ("slo", "ordinary")
                got: dict[str, float] = {}
                for kind in kinds:
                    index = (index + 1) % len(apps.WINDOW_LABELS)
                    seconds, used = _round(ito, lr, kind, index)
                    cpu[kind].append(used)
                    if seconds is None:
                        missed[kind] += 1
                        continue
                    lat[kind].append(1000 * seconds)
                    got[kind] = 1000 * seconds
                if len(got) == 2 and got["ordinary"] > 0:
                    ratios.append(got["slo"] / got["ordinary"])
                ctx.log(
                    f"round {r + 1}/{rounds}: `w` during {BURST} alerts "
                    f"{got.get('slo', float('nan')):.0f} ms (CPU {cpu['slo'][-1]:.2f} s), "
                    f"during {BURST} ordinary events {got.get('ordinary', float('nan')):.0f} ms "
                    f"(CPU {cpu['ordinary'][-1]:.2f} s)"
                )
            if not ito.alive():
                raise RuntimeError("ito-tui exited during the measurement")
    value, base = summary(lat["slo"]), summary(lat["ordinary"])
    ratio = summary(ratios)["median"] if ratios else None
    cpu_slo, cpu_ord = summary(cpu["slo"]), summary(cpu["ordinary"])
    note = (
        f"{rounds} paired rounds; `w` pressed at the app's first output after the burst; "
        f"missed (no effect within 60 s): {missed}; app CPU from the burst until quiet "
        f"(≥ {SETTLE_S:.0f} s): alerts median {cpu_slo['median']:.2f} s "
        f"(max {cpu_slo['max']:.2f}), ordinary {cpu_ord['median']:.2f} s "
        f"(max {cpu_ord['max']:.2f})"
    )
    return [
        Record(
            13,
            "alert_burst",
            f"key→screen latency during a burst of {BURST:,} alerts",
            "ms",
            "≤ 2× baseline",
            value,
            base,
            f"during {BURST:,} ordinary events",
            ratio=ratio,
            met=ratio is not None and ratio <= 2.0 and not any(missed.values()),
            notes=[note],
            extra={"cpu_s_alerts": cpu_slo, "cpu_s_ordinary": cpu_ord},
        )
    ]
