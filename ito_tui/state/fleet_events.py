"""Reducers of the fleet's events on the run stream: nodes, stragglers and the quorum.

`node.degraded|failed|replaced|recovered`, `straggler.detected|cleared` and
`quorum.changed` (API.md v1.1, kind "fleet"). The run state keeps what the event
stream said about the fleet — a bounded history of node incidents (the event log,
the timeline and alerts read it), the last state word of each node, the current
stragglers and the last quorum — not the fleet snapshot itself (`GET /fleet` is
fetched by the Nodes view while it is on screen; `state.fleet` shapes it).

Same rules as `reducers.py`: pure, never mutating, only the changed fields.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ito_tui.format import fixed, integer

from .records import bounded, with_item

if TYPE_CHECKING:
    from .run import RunState

__all__ = [
    "MAX_NODES",
    "NODE_EVENT_STATE",
    "NodeIncident",
    "node_changed",
    "node_words",
    "quorum_changed",
    "straggler_changed",
]

MAX_NODES = 1024
"""Nodes whose last state the run state remembers (a fleet of 128 nodes is the plan; a
stream naming more distinct hosts than this keeps the newest)."""

NODE_EVENT_STATE = {
    "node.degraded": "degraded",
    "node.failed": "failed",
    "node.replaced": "replaced",
    "node.recovered": "healthy",
}
"""The state word a node event leaves its node in (the contract's `NodeState`)."""


class NodeIncident(NamedTuple):
    """One fleet event as the run's history keeps it (newest last in `RunState.node_events`)."""

    seq: int
    at: datetime
    """When it happened on the run's clock (`sim_ts` if given, else `ts`)."""
    type: str
    """The event type (`node.failed`, `straggler.detected`, ...)."""
    hostname: str
    replica_id: str | None
    detail: str
    """A short plain phrase (a reason, `replaced by …`, `step 1.52 s vs fleet 1.11 s`)."""
    fault_id: str | None = None
    words: str = ""
    """The event in words, as the event log writes it (`node_words`)."""


def _measured(value: Any) -> str | None:
    return None if value is None else f"{fixed(value, 2)} s"


def straggler_detail(d: Any) -> str:
    """`step 1.52 s vs fleet 1.11 s (1.37×)` from a StragglerChanged payload ('' when
    neither is known); also the event log's wording."""
    step, p50 = _measured(d.step_time_s), _measured(d.fleet_p50_s)
    if step is not None and p50 is not None:
        text = f"step {step} vs fleet {p50}"
        if math.isfinite(d.step_time_s) and math.isfinite(d.fleet_p50_s) and d.fleet_p50_s > 0:
            text += f" ({fixed(d.step_time_s / d.fleet_p50_s, 2)}×)"
        return text
    if step is not None:
        return f"step {step}"
    return "" if p50 is None else f"fleet {p50}"


def node_words(event_type: str, d: Any) -> str:
    """A node or straggler event in words, on every screen that lists one (the event log,
    the timeline): `node h100-08 degraded: thermal throttling (replica r7)`, `node h100-03
    replaced by h100-spare-1 (fault f_12)`, `straggler h100-08 (rank 60) step 1.52 s vs fleet
    1.11 s (1.37×)`, `straggler h100-08 (rank 60) cleared`."""
    if event_type.startswith("straggler."):
        text = f"straggler {d.hostname}"
        if d.rank is not None:
            text += f" (rank {integer(d.rank)})"
        detail = straggler_detail(d)
        if event_type == "straggler.cleared":
            return f"{text} cleared" + (f": {detail}" if detail else "")
        return f"{text} {detail}" if detail else f"{text} detected"
    text = f"node {d.hostname} {event_type.removeprefix('node.')}"
    if d.replaced_by:
        text += f" by {d.replaced_by}"
    if d.reason:
        text += f": {d.reason}"
    where = [f"replica {d.replica_id}"] if d.replica_id else []
    if d.fault_id:
        where.append(f"fault {d.fault_id}")
    return text + (f" ({', '.join(where)})" if where else "")


def _nodes_with(s: RunState, hostname: str, state: str) -> Any:
    nodes = s.node_states
    if hostname not in nodes and len(nodes) >= MAX_NODES:
        # Bounded: forget the node heard of least recently (dicts keep insertion order).
        kept = dict(list(nodes.items())[len(nodes) - MAX_NODES + 1 :])
        kept[hostname] = state
        return with_item(kept, hostname, state)
    if nodes.get(hostname) == state:
        return nodes
    if hostname in nodes:
        # Move it to the end: the most recently heard of is the last to be forgotten.
        rest = {k: v for k, v in nodes.items() if k != hostname}
        return with_item(rest, hostname, state)
    return with_item(nodes, hostname, state)


def node_changed(s: RunState, ev: Any) -> RunState:
    """A node's state changed: record the incident and the node's new state word.

    A replaced node's spare (`replaced_by`) is healthy from then on; a failed or
    replaced node is no longer a straggler.
    """
    d = ev.data
    state = NODE_EVENT_STATE[ev.type]
    if ev.type == "node.replaced" and d.replaced_by:
        detail = f"replaced by {d.replaced_by}"
    else:
        detail = d.reason or ""
    incident = NodeIncident(
        ev.seq, ev.at, ev.type, d.hostname, d.replica_id, detail, d.fault_id, node_words(ev.type, d)
    )
    nodes = _nodes_with(s, d.hostname, state)
    changes: dict[str, Any] = {
        "last_seq": ev.seq,
        "node_events": bounded(s.node_events, incident),
    }
    if d.replaced_by and ev.type == "node.replaced":
        changes["node_states"] = _nodes_with(s.evolve(node_states=nodes), d.replaced_by, "healthy")
    else:
        changes["node_states"] = nodes
    if state in ("failed", "replaced") and d.hostname in s.stragglers:
        changes["stragglers"] = s.stragglers - {d.hostname}
    return s.evolve(**changes)


def straggler_changed(s: RunState, ev: Any) -> RunState:
    """A node started or stopped straggling: record the incident and the straggler set."""
    d = ev.data
    detected = ev.type == "straggler.detected"
    incident = NodeIncident(
        ev.seq, ev.at, ev.type, d.hostname, None, straggler_detail(d), None, node_words(ev.type, d)
    )
    if detected:
        stragglers = s.stragglers if d.hostname in s.stragglers else s.stragglers | {d.hostname}
        if len(stragglers) > MAX_NODES:
            stragglers = s.stragglers  # bounded: an absurd stream adds no more names
    else:
        stragglers = s.stragglers - {d.hostname}
    return s.evolve(
        last_seq=ev.seq,
        node_events=bounded(s.node_events, incident),
        stragglers=stragglers,
    )


def quorum_changed(s: RunState, ev: Any) -> RunState:
    """The torchft quorum changed: keep the newest (the event log shows each change)."""
    return s.evolve(last_seq=ev.seq, quorum=ev.data)
