"""The context a run's log lines are derived in: its shape and its fleet's names and ranks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .catalog import arch_for
from .core import JsonDict
from .joblog_text import Line, short
from .physics import uniform
from .plan_perf import flops_per_token


@dataclass(frozen=True)
class LogContext:
    """What a run's lines depend on besides the event: the run's shape and its fleet.

    Names and ranks follow the fleet (`fleet.py`): a node is its short hostname, node
    slot i holds ranks i*g .. i*g+g-1, a spare takes its predecessor's slot (and ranks),
    replica groups are fixed per slot. Only that structure is read (it never changes for
    a hostname once it exists), so lines stay the same however commits batch events.
    """

    seed: int
    slots: tuple[str, ...]
    """The hostname holding each slot now (a spare replaces the failed node)."""
    slot_of: Mapping[str, int]
    """Every hostname the run has had -> its slot."""
    replica_of_slot: tuple[str, ...]
    gpus_per_node: int
    params: float
    hbm_gib: float
    fp8: bool
    flops_per_token: float = 0.0
    """As torchtitan counts them for tflops/MFU (the planner's); 0: 6 x params."""
    xid_gpu: Mapping[str, int] = field(default_factory=dict)
    """Failed hostname -> the GPU index the fleet counted its Xid on."""
    fleet_events: bool = False
    """The engine emits `node.failed`/`node.replaced`: the failure chain hangs on them."""

    @property
    def world_size(self) -> int:
        return max(1, len(self.slots) * self.gpus_per_node)

    @property
    def rank0_node(self) -> str:
        return self.slots[0]

    def slot(self, hostname: str | None) -> int:
        found = self.slot_of.get(short(hostname or ""))
        if found is not None:
            return found
        # A name the fleet does not know: a stable slot from the name.
        return int(uniform(self.seed, "node-slot", hostname) * len(self.slots))

    def ranks_of(self, hostname: str | None) -> range:
        base = self.slot(hostname) * self.gpus_per_node
        return range(base, base + self.gpus_per_node)

    def node_of(self, rank: int) -> str:
        return self.slots[min(len(self.slots) - 1, rank // self.gpus_per_node)]

    def replica_of(self, hostname: str | None) -> str:
        return self.replica_of_slot[self.slot(hostname)]

    def peer_of(self, hostname: str | None) -> str:
        """The node whose watchdog times out waiting on `hostname`: the next slot of its
        replica group, else the first slot of the next group (as `fleet.peer_of`)."""
        me = self.slot(hostname)
        n = len(self.slots)
        same = [
            i for i in range(n) if i != me and self.replica_of_slot[i] == self.replica_of_slot[me]
        ]
        other = [i for i in range(me + 1, n)] + list(range(me))
        pick = (same or other or [me])[0]
        return self.slots[pick]


def context_of(state: JsonDict) -> LogContext:
    """The LogContext of an engine's JSON state (its `fleet` if it has one, else its nodes)."""
    plan: JsonDict = state["run"].get("plan") or {}
    names = [short(str(n)) for n in state.get("nodes") or ()] or ["node-01"]
    gpus = int(state.get("gpus") or 8)
    fleet: JsonDict | None = state.get("fleet")
    slots = list(names)
    slot_of = {name: i for i, name in enumerate(names)}
    per = max(1, -(-len(names) // max(1, int(plan.get("dp_replicate") or 1))))
    replicas = [f"replica_{i // per}" for i in range(len(names))]
    xid_gpu: dict[str, int] = {}
    if fleet is not None:
        for node in fleet.get("nodes") or ():
            if node.get("xid_gpu") is not None:
                xid_gpu[str(node["hostname"])] = int(node["xid_gpu"])
            slot = int(node["slot"])
            if slot >= len(slots):
                continue
            slot_of[str(node["hostname"])] = slot
            replicas[slot] = str(node.get("replica_id") or replicas[slot])
            if node.get("state") not in ("failed", "replaced"):
                slots[slot] = str(node["hostname"])
    return LogContext(
        seed=int(state["seed"]),
        slots=tuple(slots),
        slot_of=slot_of,
        replica_of_slot=tuple(replicas),
        gpus_per_node=max(1, gpus // len(names)),
        params=float(state.get("params") or 8e9),
        flops_per_token=_flops_per_token(state["run"].get("spec") or {}),
        hbm_gib=float(plan.get("hbm_per_gpu_gib") or 80.0),
        fp8=str(plan.get("precision") or "bf16") != "bf16",
        xid_gpu=xid_gpu,
        fleet_events=fleet is not None,
    )


Maker = Callable[[JsonDict, LogContext, datetime], list[Line]]
"""The lines of one event: (its data, the run's context, its simulated time) -> lines."""


def num(value: Any, default: float = float("nan")) -> float:
    """A payload number as a float (`"NaN"`/`"Infinity"` strings too); `default` if none."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _flops_per_token(spec: JsonDict) -> float:
    """The planner's FLOPs per token for the run's model (so a line's tflops and mfu agree)."""
    try:
        return flops_per_token(arch_for(str(spec["model_size"])), int(spec.get("seq_len") or 8192))
    except (KeyError, ValueError):
        return 0.0
