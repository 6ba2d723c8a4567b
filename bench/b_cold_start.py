"""#1 cold start to the first painted booking picker, and #8 RSS at that first frame.

Paired rounds in a real pty: the minimal Textual app (to its header title) and
`ito-tui` against an already-running desk_sim (to the booking picker's title),
in alternating order; one unmeasured warm-up of each first so both start from a
warm page cache. RSS is read from /proc the moment the marker arrives.
"""

from __future__ import annotations

from . import apps
from .context import Backend, Context, backend
from .record import Record
from .stats import summary
from .term import TermProcess

TIMEOUT = 30.0


def _start(ctx: Context, which: str, be: Backend) -> tuple[float | None, int, float]:
    proc: TermProcess
    if which == "baseline":
        proc, marker = apps.start_baseline(ctx, "idle"), apps.BASELINE_TITLE
    else:
        proc, marker = apps.start_ito(ctx, be), apps.PICKER_MARKER
    rss: list[int] = []
    cpu: list[float] = []

    def found() -> None:
        rss.append(proc.rss())
        cpu.append(proc.cpu())

    with proc:
        t = proc.wait_marker(marker, TIMEOUT, on_found=found)
        if t is None:
            ctx.log(f"{which}: no first frame within {TIMEOUT} s; screen: {proc.text()[-300:]!r}")
    return t, (rss[0] if rss else 0), (cpu[0] if cpu else float("nan"))


def run(ctx: Context) -> list[Record]:
    rounds = ctx.count(10, 1)
    times: dict[str, list[float]] = {"baseline": [], "ito": []}
    rsss: dict[str, list[float]] = {"baseline": [], "ito": []}
    t_ratios: list[float] = []
    m_ratios: list[float] = []
    c_ratios: list[float] = []
    cpus: dict[str, list[float]] = {"baseline": [], "ito": []}
    with backend(speed=1.0, scenario="happy") as be:
        for which in ("baseline", "ito"):
            _start(ctx, which, be)  # warm-up, not counted
        for r in range(rounds):
            order = ("baseline", "ito") if r % 2 == 0 else ("ito", "baseline")
            got = {w: _start(ctx, w, be) for w in order}
            (tb, mb, cb), (ti, mi, ci) = got["baseline"], got["ito"]
            if tb is None or ti is None:
                continue
            times["baseline"].append(tb)
            times["ito"].append(ti)
            rsss["baseline"].append(mb / 2**20)
            rsss["ito"].append(mi / 2**20)
            t_ratios.append(ti / tb)
            cpus["baseline"].append(cb)
            cpus["ito"].append(ci)
            c_ratios.append(ci / cb if cb else float("nan"))
            m_ratios.append(mi / mb if mb else float("nan"))
            ctx.log(
                f"round {r + 1}/{rounds}: baseline {tb * 1000:.0f} ms {mb / 2**20:.1f} MiB, "
                f"ito-tui {ti * 1000:.0f} ms {mi / 2**20:.1f} MiB; CPU to first frame "
                f"{cb * 1000:.0f} vs {ci * 1000:.0f} ms"
            )
    t_ratio = summary(t_ratios)["median"]
    m_ratio = summary(m_ratios)["median"]
    note = f"{len(t_ratios)} paired rounds, alternating order; {apps.environ_note()}"
    cold = Record(
        1,
        "cold_start",
        "cold start to first painted booking picker",
        "s",
        "≤ 1.3× baseline",
        summary(times["ito"]),
        summary(times["baseline"]),
        "minimal Textual app to its first frame",
        ratio=t_ratio,
        met=(t_ratio <= 1.3) if t_ratios else None,
        notes=[
            note,
            f"CPU time to first frame (less sensitive to machine load): ito-tui "
            f"{summary(cpus['ito'])['median'] * 1000:.0f} ms vs baseline "
            f"{summary(cpus['baseline'])['median'] * 1000:.0f} ms, ratio "
            f"{summary(c_ratios)['median']:.2f}×",
        ],
        extra={
            "ratio_per_round": summary(t_ratios),
            "cpu_s": {k: summary(v) for k, v in cpus.items()},
            "cpu_ratio": summary(c_ratios),
        },
    )
    rss = Record(
        8,
        "cold_start",
        "RSS at first frame",
        "MiB",
        "≤ 1.3× baseline",
        summary(rsss["ito"]),
        summary(rsss["baseline"]),
        "minimal Textual app at its first frame",
        ratio=m_ratio,
        met=(m_ratio <= 1.3) if m_ratios else None,
        notes=[note],
        extra={"ratio_per_round": summary(m_ratios)},
    )
    return [cold, rss]
