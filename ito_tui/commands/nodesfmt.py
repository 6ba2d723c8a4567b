"""The fleet as text for `ito-tui nodes`: a title, the quorum, the replicas, the nodes.

Every word, glyph and the order come from `state.fleet.fleet_view`, the Nodes tab's
own view (a node's state is a glyph AND a word: `✗ failed`, `▲ straggler`; worst first),
so the CLI and the TUI cannot disagree. A node's eight GPUs are one column of their
utilisation in percent (GPU 0 first) and the hottest GPU, the most memory used and the
node's power draw beside it: the row stays near 100 columns. Numbers go through
`ito_tui.format` (`—` for a counter the backend does not report, `NaN` never a number).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import TYPE_CHECKING

from ito_tui.format import MISSING, fixed, integer

from .output import safe

if TYPE_CHECKING:
    from ito_tui.contract import Fleet
    from ito_tui.state.fleet import GpuCell, NodeRow, ReplicaRow

    from .output import Output

_STATE_STYLE: dict[str, tuple[str, ...]] = {
    "failed": ("red", "bold"),
    "degraded": ("yellow",),
    "straggler": ("yellow", "bold"),
    "draining": ("yellow",),
    "replaced": ("cyan",),
    "healthy": ("green",),
    "lost": ("red", "bold"),
    "recovering": ("yellow",),
    "joining": ("cyan",),
}


def _most(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _num(value: float | None, digits: int = 0) -> str:
    return MISSING if value is None else fixed(value, digits)


def gpu_utils(gpus: Sequence[GpuCell]) -> str:
    """`93 94 92 95 93 94 92 10`: each GPU's utilisation in percent, GPU 0 first."""
    return " ".join(MISSING if g.util_frac is None else fixed(g.util_frac * 100, 0) for g in gpus)


def _memory(gpus: Sequence[GpuCell]) -> str:
    used = _most([g.mem_used_gib for g in gpus])
    total = _most([g.mem_total_gib for g in gpus])
    if used is None:
        return MISSING
    return _num(used) if total is None else f"{_num(used)}/{_num(total)}"


def _power(gpus: Sequence[GpuCell]) -> str:
    known = [g.power_w for g in gpus if g.power_w is not None]
    return MISSING if not known else fixed(sum(known), 0, grouping=True)


def _state(out: Output, glyph: str, state: str) -> str:
    return out.style(f"{glyph} {state}", *_STATE_STYLE.get(state, ("yellow",)))


def node_cells(out: Output, row: NodeRow) -> list[str]:
    """One node's cells, in `NODE_HEADERS` order."""
    gpus = row.gpus
    return [
        row.hostname,
        _state(out, row.glyph, row.state),
        row.replica_id or MISSING,
        row.p50,
        row.p99,
        row.ratio,
        gpu_utils(gpus) or MISSING,
        _num(_most([g.temp_c for g in gpus])),
        _memory(gpus),
        _power(gpus),
        integer(row.xid),
        integer(row.ecc),
        integer(row.nccl),
    ]


NODE_HEADERS = ("node", "state", "replica", "p50", "p99", "×median", "util % gpu 0-7",
                "max °C", "mem GiB", "power W", "xid", "ecc", "nccl")  # fmt: skip


def replica_cells(out: Output, row: ReplicaRow) -> list[str]:
    behind = f"{integer(row.behind)} behind" if row.behind else ""
    return [
        row.replica_id,
        _state(out, row.glyph, row.state),
        row.step_text,
        behind,
        row.heartbeat,
        ", ".join(row.nodes) or MISSING,
    ]


REPLICA_HEADERS = ("replica", "state", "step", "", "heartbeat", "nodes")


def render_fleet(out: Output, run_id: str, fleet: Fleet) -> None:
    """Print `fleet` on `out`: title, quorum, replicas, nodes worst first."""
    from ito_tui.state.fleet import fleet_view

    view = fleet_view(fleet)
    at = fleet.at.astimezone(UTC)
    out.line(
        out.style(f"fleet of {safe(run_id)} at {at:%Y-%m-%d %H:%M:%S} UTC", "bold")
        + f" · {view.summary} · fleet step p50 {view.fleet_p50}"
    )
    quorum = view.quorum if view.quorum_ok else out.style(view.quorum, "red", "bold")
    out.line(quorum)
    if view.replicas:
        out.line()
        out.table(REPLICA_HEADERS, [replica_cells(out, r) for r in view.replicas])
    out.line()
    if not view.nodes:
        out.line("no nodes reported")
        return
    out.table(NODE_HEADERS, [node_cells(out, r) for r in view.nodes])
    if view.hidden_nodes:
        out.line(f"… and {integer(view.hidden_nodes)} more nodes not shown (see --json)")
