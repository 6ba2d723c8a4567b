"""`fleet_view(fleet, sort=)`: a run's fleet (`GET /v1/runs/{id}/fleet`) as the rows the
Nodes tab and `ito-tui nodes` show — one set of words, glyphs and order for both.

The quorum line (id, participants / min, age, status text), one row per replica (state,
step, heartbeat age; a healthy replica behind the max step is `recovering`) and one row
per node: state as glyph AND word (`✗ failed`, `▲ straggler`, `↻ replaced`,
`! degraded`, `✓ healthy`), step time p50 / p99 and their ratio to the fleet median,
per-GPU cells (util, memory, temperature, power; a counter the backend does not report
is `format.MISSING`), Xid / uncorrected ECC / NCCL timeout counts. "Worst first" orders
failed > degraded, straggler, draining (and an unknown state) > replaced > healthy, then
the slowest step first, then the name.

Pure: every backend string is made inert here (`textsafe.one_line`), every number goes
through `ito_tui.format`. Bounded: at most `MAX_NODES` node rows (and `MAX_GPUS` cells
each) are built whatever the backend sends; 128 nodes × 8 GPUs is the size planned for.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ito_tui.contract import Fleet, FleetNode, GpuCounters, Replica
from ito_tui.format import MISSING, duration, fixed, general, integer, nonfinite, percent
from ito_tui.textsafe import one_line

__all__ = [
    "GLYPHS",
    "MAX_GPUS",
    "MAX_NODES",
    "REPLICA_GLYPHS",
    "SORTS",
    "FleetView",
    "GpuCell",
    "NodeRow",
    "ReplicaRow",
    "fleet_view",
    "seconds_text",
]

SORTS = ("worst", "name", "step")
"""The orders a fleet view offers (`s` cycles them): worst first, by name, slowest first."""
MAX_NODES = 4096
MAX_GPUS = 16
NAME_WIDTH = 64
"""Characters of a host or replica name kept (a name longer than this is cut with `…`)."""

GLYPHS = {
    "failed": "✗",
    "degraded": "!",
    "straggler": "▲",
    "draining": "↓",
    "replaced": "↻",
    "healthy": "✓",
}
"""A node's state as a glyph, shown next to its word (never the glyph alone)."""
UNKNOWN_GLYPH = "?"
REPLICA_GLYPHS = {"healthy": "✓", "recovering": "↻", "joining": "+", "lost": "✗"}
_SEVERITY = {"failed": 0, "degraded": 1, "straggler": 1, "draining": 1, "replaced": 2, "healthy": 3}
_UNKNOWN_SEVERITY = 1  # a state this client does not know deserves a look


@dataclass(frozen=True, slots=True)
class GpuCell:
    """One GPU's counters, raw (for a chart-like cell) and as text."""

    index: int
    util_frac: float | None
    mem_used_gib: float | None
    mem_total_gib: float | None
    temp_c: float | None
    power_w: float | None
    xid: int
    ecc: int
    util: str
    """`87%`, or `—`."""
    mem: str
    """`58/80 GiB`, `58 GiB` without a total, or `—`."""
    temp: str
    """`71°C` or `—`."""
    power: str
    """`690 W` or `—`."""


class NodeRow(NamedTuple):
    """One node, as a row."""

    hostname: str
    """Inert (`one_line`), at most `NAME_WIDTH` characters."""
    replica_id: str | None
    state: str
    """`failed`, `degraded`, `straggler`, `draining`, `replaced`, `healthy`, or the
    backend's own word (inert) for a state this client does not know."""
    glyph: str
    severity: int
    """0 (failed) … 3 (healthy): the worst-first order."""
    p50_s: float | None
    p99_s: float | None
    p50: str
    """`1.52s`, or `—`."""
    p99: str
    ratio_value: float | None
    """p50 / the fleet's median p50 (None when either is unknown)."""
    ratio: str
    """`1.37×`, or `—`."""
    ratio_p99: str
    """p99 / the fleet's median p50: `2.10×`, or `—`."""
    gpus: tuple[GpuCell, ...]
    xid: int
    """Xid errors summed over the node's GPUs."""
    ecc: int
    """Uncorrected ECC errors summed over the node's GPUs."""
    nccl: int
    """NCCL timeouts on the node."""
    straggler: bool


class ReplicaRow(NamedTuple):
    """One torchft replica group."""

    replica_id: str
    state: str
    """The backend's state, except a healthy replica behind the max step: `recovering`."""
    glyph: str
    step: int
    step_text: str
    behind: int
    """Steps behind the most advanced replica (0 for it)."""
    heartbeat_age_s: float | None
    heartbeat: str
    """`3s`, `1m05s`, or `—`."""
    nodes: tuple[str, ...]


class FleetView(NamedTuple):
    """What a fleet view draws, in order."""

    quorum: str
    """`quorum 7 · 3 replicas (min 2) · age 4m12s · <status text>`."""
    quorum_ok: bool
    """False when the participants are below the minimum (training cannot go on)."""
    replicas: tuple[ReplicaRow, ...]
    nodes: tuple[NodeRow, ...]
    sort: str
    fleet_p50_s: float | None
    """The median of the nodes' p50 step times (failed and replaced nodes left out)."""
    fleet_p50: str
    summary: str
    """`4 nodes: 1 failed, 1 straggler, 2 healthy` (worst first)."""
    hidden_nodes: int
    """Nodes beyond `MAX_NODES` not shown (0 but for an absurd backend)."""


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def seconds_text(value: float | None) -> str:
    """A step time in a few cells, to three figures with its zeros kept so a column reads
    evenly: `0.512s`, `1.52s`, `2.20s` (not `2.2s` under `2.24s`), `12.3s`, `812s`; `—` unknown;
    `NaN`/`∞` marks."""
    if value is None:
        return MISSING
    mark = nonfinite(value)
    if mark is not None:
        return mark
    size = abs(value)
    if 0 < size < 0.0005:
        return f"{general(value)}s"  # not `0.000s` for a step that took time
    digits = 3 if size < 0.9995 else 2 if size < 9.995 else 1 if size < 99.95 else 0
    return f"{fixed(value, digits)}s"


def _ratio(value: float | None) -> str:
    return MISSING if value is None else f"{fixed(value, 2)}×"


def _name(raw: str) -> str:
    return one_line(raw, NAME_WIDTH)


def _gpu(g: GpuCounters) -> GpuCell:
    used, total = g.mem_used_gib, g.mem_total_gib
    if used is None:
        mem = MISSING
    elif total is None:
        mem = f"{fixed(used, 0)} GiB"
    else:
        mem = f"{fixed(used, 0)}/{fixed(total, 0)} GiB"
    return GpuCell(
        g.index,
        g.util_frac,
        used,
        total,
        g.temp_c,
        g.power_w,
        g.xid_errors,
        g.ecc_errors_uncorrected,
        percent(g.util_frac),
        mem,
        MISSING if g.temp_c is None else f"{fixed(g.temp_c, 0)}°C",
        MISSING if g.power_w is None else f"{fixed(g.power_w, 0)} W",
    )


def _state(node: FleetNode) -> str:
    raw = str(node.state)
    if node.straggler and raw in ("healthy", "degraded"):
        return "straggler"
    return raw if raw in _SEVERITY else _name(raw)


def _node(node: FleetNode, median: float | None) -> NodeRow:
    state = _state(node)
    p50, p99 = node.step_time_s_p50, node.step_time_s_p99
    f50, f99 = _finite(p50), _finite(p99)
    ratio = f50 / median if f50 is not None and median else None
    ratio99 = f99 / median if f99 is not None and median else None
    gpus = tuple(_gpu(g) for g in node.gpus[:MAX_GPUS])
    return NodeRow(
        _name(node.hostname),
        None if node.replica_id is None else _name(node.replica_id),
        state,
        GLYPHS.get(state, UNKNOWN_GLYPH),
        _SEVERITY.get(state, _UNKNOWN_SEVERITY),
        p50,
        p99,
        seconds_text(p50),
        seconds_text(p99),
        ratio,
        _ratio(ratio),
        _ratio(ratio99),
        gpus,
        sum(g.xid for g in gpus),
        sum(g.ecc for g in gpus),
        node.nccl_timeouts,
        node.straggler,
    )


_DIGITS = re.compile(r"(\d+)")


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """`b200-16n-ib-3` before `b200-16n-ib-12` (numbers compared as numbers)."""
    return tuple(
        (1, int(part)) if part.isdigit() else (0, part)
        for part in _DIGITS.split(name.casefold())
        if part
    )


def _slowest_first(row: NodeRow) -> float:
    f = _finite(row.p50_s)
    return -f if f is not None else math.inf  # unknown step time last


def _sorted(rows: list[NodeRow], sort: str) -> list[NodeRow]:
    if sort == "name":
        return sorted(rows, key=lambda r: _natural(r.hostname))
    if sort == "step":
        return sorted(rows, key=lambda r: (_slowest_first(r), _natural(r.hostname)))
    return sorted(rows, key=lambda r: (r.severity, _slowest_first(r), _natural(r.hostname)))


def _replicas(replicas: Sequence[Replica]) -> tuple[ReplicaRow, ...]:
    if not replicas:
        return ()
    top = max(r.step for r in replicas)
    rows = []
    for r in replicas[:MAX_NODES]:
        state = str(r.state)
        if state == "healthy" and r.step < top:
            state = "recovering"
        elif state not in REPLICA_GLYPHS:
            state = _name(state)
        rows.append(
            ReplicaRow(
                _name(r.replica_id),
                state,
                REPLICA_GLYPHS.get(state, UNKNOWN_GLYPH),
                r.step,
                integer(r.step),
                top - r.step,
                r.heartbeat_age_s,
                duration(r.heartbeat_age_s),
                tuple(_name(n) for n in r.nodes[: MAX_GPUS * 4]),
            )
        )
    return tuple(rows)


def _quorum(fleet: Fleet) -> tuple[str, bool]:
    q = fleet.quorum
    noun = "replica" if q.participants == 1 else "replicas"
    ok = q.participants >= q.min_replicas
    text = f"quorum {integer(q.quorum_id)} · {integer(q.participants)} {noun} (min "
    text += f"{integer(q.min_replicas)})" + ("" if ok else " — below minimum")
    if q.age_s is not None:
        text += f" · age {duration(q.age_s)}"
    if q.status_text:
        text += f" · {one_line(q.status_text, 120)}"
    return text, ok


def _summary(rows: Sequence[NodeRow], hidden: int) -> str:
    counts: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: r.severity):
        counts[row.state] = counts.get(row.state, 0) + 1
    total = len(rows) + hidden
    parts = ", ".join(f"{integer(n)} {state}" for state, n in counts.items())
    text = f"{integer(total)} {'node' if total == 1 else 'nodes'}"
    return f"{text}: {parts}" if parts else text


def fleet_view(fleet: Fleet, *, sort: str = "worst") -> FleetView:
    """The rows of `fleet`, nodes ordered by `sort` (one of `SORTS`; unknown: worst)."""
    nodes = fleet.nodes[:MAX_NODES]
    live = [
        p
        for n in nodes
        if str(n.state) not in ("failed", "replaced")
        and (p := _finite(n.step_time_s_p50)) is not None
    ]
    median = statistics.median(live) if live else None
    rows = _sorted([_node(n, median) for n in nodes], sort if sort in SORTS else "worst")
    quorum, ok = _quorum(fleet)
    hidden = len(fleet.nodes) - len(nodes)
    return FleetView(
        quorum,
        ok,
        _replicas(fleet.replicas),
        tuple(rows),
        sort if sort in SORTS else "worst",
        median,
        seconds_text(median),
        _summary(rows, hidden),
        hidden,
    )
