"""The simulated fleet of a run: nodes of 8 GPUs, torchft replica groups, the quorum.

All of it lives in the engine's JSON state under `s["fleet"]` (so it round-trips
through `to_state`/`from_state` and survives a restart); the engine's fleet mixin
(`fleet_flow.py`) changes it only where it emits the matching event, so a snapshot
is consistent with the event stream at every point. The counters a snapshot shows
(util, temperature, power, step times) are pure functions of (seed, hostname, GPU,
simulated minute) and the node's condition, never stored.

Names and ranks, for the job log (H1) and everything else that names a node:
- a node's `hostname` is the first DNS label of the booking's node name
  (`h100-4n-ib-03`); spares brought in for a failed node continue the numbering
  (`h100-4n-ib-05`, `-06`, ...);
- node slot `i` (its place in the booking) holds global ranks `8i .. 8i+7`; a
  spare takes over the slot, and so the ranks, of the node it replaces;
- replica groups (torchft) are `replica_0 ..`: consecutive slots, at most 4 groups.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from statistics import median

from .core import JsonDict, iso, parse_iso
from .physics import uniform

GPUS_PER_NODE = 8
MAX_REPLICAS = 4
DEGRADED_AT = 1.12
"""A node whose step time is this many times the fleet median is `degraded`."""
STRAGGLER_AT = 1.3
"""... and a straggler at this ratio (API.md v1.1)."""
STRAGGLER_CLEAR_AT = 1.15
RECOVERED_AT = 1.05
ACTIVE = ("healthy", "degraded", "draining")
"""Node states that are part of the fleet (a failed or replaced node is not)."""


def _short(hostname: str) -> str:
    return hostname.split(".", 1)[0]


def _replica_count(n_nodes: int) -> int:
    """The largest divisor of n_nodes up to MAX_REPLICAS: whole nodes per replica group."""
    return max(d for d in range(1, min(MAX_REPLICAS, n_nodes) + 1) if n_nodes % d == 0)


def build(hostnames: list[str], *, mem_total_gib: float = 80.0) -> JsonDict:
    """A fresh, healthy fleet over the booking's nodes (names shortened to their label)."""
    names = [_short(h) for h in hostnames] or ["node-01"]
    n_rep = _replica_count(len(names))
    per = len(names) // n_rep
    nodes: list[JsonDict] = [
        {
            "hostname": name,
            "slot": i,
            "replica_id": f"replica_{i // per}",
            "state": "healthy",
            "straggler": False,
            "slow": 1.0,
            "throttle": None,
            "nccl_timeouts": 0,
            "xid": {},
            "ecc": {},
        }
        for i, name in enumerate(names)
    ]
    replicas = [
        {
            "replica_id": f"replica_{r}",
            "state": "healthy",
            "step": None,
            "since_t": 0.0,
        }
        for r in range(n_rep)
    ]
    return {
        "v": 1,
        "mem_total_gib": mem_total_gib,
        "nodes": nodes,
        "replicas": replicas,
        "spares": 0,
        "quorum": {
            "quorum_id": 1,
            "participants": n_rep,
            "min_replicas": max(1, n_rep // 2),
            "since_t": 0.0,
        },
    }


def ensure(state: JsonDict) -> JsonDict:
    """The run's fleet, built on first use (engine states written before fleets existed)."""
    fleet = state.get("fleet")
    if fleet is None:
        fleet = build(list(state.get("nodes") or []))
        state["fleet"] = fleet
    live: JsonDict = fleet
    return live


# ---------------------------------------------------------------- names and ranks


def hostnames(state: JsonDict) -> list[str]:
    """Every node the run's fleet has had, in fleet order (replaced nodes included)."""
    return [n["hostname"] for n in ensure(state)["nodes"]]


def active_hostnames(state: JsonDict) -> list[str]:
    """The nodes currently in the fleet (not failed or replaced)."""
    return [n["hostname"] for n in ensure(state)["nodes"] if n["state"] in ACTIVE]


def node(state: JsonDict, hostname: str) -> JsonDict | None:
    """The fleet's record of `hostname` (its state, slot, replica, counters)."""
    for n in ensure(state)["nodes"]:
        if n["hostname"] == hostname:
            found: JsonDict = n
            return found
    return None


def ranks_of(state: JsonDict, hostname: str) -> range:
    """The global ranks on `hostname` (8 per node); empty for a node the fleet lacks."""
    found = node(state, hostname)
    if found is None:
        return range(0)
    slot = int(found["slot"])
    return range(slot * GPUS_PER_NODE, (slot + 1) * GPUS_PER_NODE)


def node_of_rank(state: JsonDict, rank: int) -> str | None:
    """The node that holds `rank` now (a spare holds its predecessor's ranks)."""
    slot = rank // GPUS_PER_NODE
    holders = [n for n in ensure(state)["nodes"] if n["slot"] == slot]
    active = [n for n in holders if n["state"] in ACTIVE]
    pick = (active or holders)[-1:] if holders else []
    return str(pick[0]["hostname"]) if pick else None


def replica_of(state: JsonDict, hostname: str) -> str | None:
    found = node(state, hostname)
    return None if found is None else str(found["replica_id"])


def peer_of(state: JsonDict, hostname: str) -> str | None:
    """The active node whose NCCL watchdog times out waiting on `hostname`: another node of
    its replica group if it has one, else the first node of the next group."""
    fleet = ensure(state)
    me = node(state, hostname)
    if me is None:
        return None
    active = [n for n in fleet["nodes"] if n["state"] in ACTIVE and n["hostname"] != hostname]
    same = [n for n in active if n["replica_id"] == me["replica_id"]]
    pick = same or sorted(active, key=lambda n: (n["slot"] <= me["slot"], n["slot"]))
    return str(pick[0]["hostname"]) if pick else None


def spare_name(state: JsonDict) -> str:
    """The hostname of the next spare: the booking's numbering continued."""
    fleet = ensure(state)
    first = fleet["nodes"][0]["hostname"]
    match = re.fullmatch(r"(.*?)(\d+)", first)
    count = 1 + max(n["slot"] for n in fleet["nodes"]) + int(fleet["spares"])
    if match is None:
        return f"{first}-spare-{int(fleet['spares']) + 1}"
    stem, digits = match.groups()
    return f"{stem}{int(digits) + count:0{len(digits)}d}"


# ---------------------------------------------------------------- the snapshot


def slow_factor(node_: JsonDict, t: float) -> float:
    """How many times slower than its peers `node_` steps at simulated time `t`.

    A throttle ramps linearly from 1 to `peak` over `ramp_s`, holds for `hold_s`, then
    (if it clears) ramps back down over `ramp_s / 2`.
    """
    throttle = node_.get("throttle")
    if not throttle:
        return 1.0
    start, ramp, peak = float(throttle["start_t"]), float(throttle["ramp_s"]), throttle["peak"]
    up = min(1.0, max(0.0, (t - start) / max(ramp, 1e-9)))
    factor = 1.0 + (float(peak) - 1.0) * up
    if throttle.get("clears"):
        down_at = start + ramp + float(throttle["hold_s"])
        down = min(1.0, max(0.0, (t - down_at) / max(ramp / 2, 1e-9)))
        factor -= (factor - 1.0) * down
    return factor


def _gpu(
    seed: int,
    n: JsonDict,
    g: int,
    minute: int,
    *,
    mode: str,
    slow: float,
    mem_gib: float,
    mem_total: float,
) -> JsonDict:
    u = uniform(seed, "gpu", n["hostname"], g, minute)
    hot = uniform(seed, "gpu-hot", n["hostname"], g)
    xid, ecc = int(n["xid"].get(str(g), 0)), int(n["ecc"].get(str(g), 0))
    if n["state"] not in ACTIVE:
        # Unreachable (failed) or gone (replaced): no counters, the error counts remain.
        return {
            "index": g,
            "util_frac": None,
            "mem_used_gib": None,
            "mem_total_gib": mem_total,
            "temp_c": None,
            "power_w": None,
            "xid_errors": xid,
            "ecc_errors_uncorrected": ecc,
        }
    throttle = slow - 1.0
    if mode == "hang":
        # An NCCL hang's signature: every GPU "100 % busy" spinning in a collective kernel,
        # at a fraction of training power, memory still held.
        util, temp, power = 1.0, 50.0 + 4.0 * u, 240.0 + 30.0 * u
        mem = mem_gib * (0.97 + 0.02 * uniform(seed, "gpu-mem", n["hostname"], g))
    elif mode == "train":
        util = max(0.05, 0.93 + 0.05 * u - 0.7 * throttle * (0.6 + 0.4 * hot))
        temp = min(94.0, 61.0 + 9.0 * u + 60.0 * throttle * (0.5 + 0.5 * hot))
        power = (590.0 + 90.0 * u) / (1.0 + 1.2 * throttle)
        mem = mem_gib * (0.97 + 0.02 * uniform(seed, "gpu-mem", n["hostname"], g))
    else:
        util, temp, power, mem = 0.01 * u, 34.0 + 4.0 * u, 70.0 + 10.0 * u, 0.6
    return {
        "index": g,
        "util_frac": round(min(1.0, util), 3),
        "mem_used_gib": round(min(mem, mem_total), 2),
        "mem_total_gib": mem_total,
        "temp_c": round(temp, 1),
        "power_w": round(power, 1),
        "xid_errors": xid,
        "ecc_errors_uncorrected": ecc,
    }


def step_time_s(state: JsonDict) -> float | None:
    """The fleet's healthy per-step time (simulated seconds), or None before training."""
    train = state.get("train")
    if not train:
        return None
    per_q = float(train["total_steps"]) / float(train["n_quanta"])
    throughput = float(train.get("throughput", 1.0))
    return float(train["q"]) / max(1e-9, per_q * throughput)


def node_step_p50(state: JsonDict, n: JsonDict, t: float) -> float | None:
    """`n`'s median step time. A throttle already priced into the stage's throughput (the
    budget scenario's squeeze) sets the fleet's pace: the others step that much faster."""
    base = step_time_s(state)
    if base is None or n["state"] not in ACTIVE:
        return None
    priced = max(
        (
            slow_factor(m, t)
            for m in ensure(state)["nodes"]
            if m["state"] in ACTIVE and (m.get("throttle") or {}).get("priced")
        ),
        default=1.0,
    )
    jitter = 1.0 + 0.02 * (uniform(int(state["seed"]), "step", n["hostname"]) - 0.5)
    return base * slow_factor(n, t) / priced * jitter


def fleet_p50(state: JsonDict, t: float, *, without: str | None = None) -> float | None:
    """The median of the active nodes' p50 step times (leaving out `without`)."""
    values = [
        v
        for n in ensure(state)["nodes"]
        if n["hostname"] != without and (v := node_step_p50(state, n, t)) is not None
    ]
    return median(values) if values else None


def snapshot(state: JsonDict, now: datetime) -> JsonDict:
    """`GET /v1/runs/{id}/fleet`: a valid `Fleet` of the run's state at its simulated clock.

    `last_event_seq` (an added field) names the last event the snapshot reflects.
    """
    fleet = ensure(state)
    seed, t = int(state["seed"]), float(state["clock"])
    run = state["run"]
    created = parse_iso(run["created_at"])
    training = run["state"] == "running" and bool(state.get("train"))
    mode = ("hang" if state.get("hang") else "train") if training else "idle"
    plan = run.get("plan") or {}
    mem_gib = float(plan.get("est_mem_per_gpu_gib", 60.0))
    mem_total = float(fleet["mem_total_gib"])
    minute = int(t // 60)
    train = state.get("train")
    step_now = int(train["step"]) if train else 0
    nodes_out: list[JsonDict] = []
    by_replica: dict[str, list[str]] = {}
    for n in fleet["nodes"]:
        slow = slow_factor(n, t)
        p50 = node_step_p50(state, n, t)
        p99 = None
        if p50 is not None:
            p99 = p50 * (
                1.05 + 0.05 * uniform(seed, "p99", n["hostname"], minute) + 0.3 * (slow - 1)
            )
        if n["state"] in ACTIVE:
            by_replica.setdefault(n["replica_id"], []).append(n["hostname"])
        nodes_out.append(
            {
                "hostname": n["hostname"],
                "replica_id": n["replica_id"],
                "state": n["state"],
                "step_time_s_p50": None if p50 is None else round(p50, 3),
                "step_time_s_p99": None if p99 is None else round(p99, 3),
                "straggler": bool(n["straggler"]),
                "nccl_timeouts": int(n["nccl_timeouts"]),
                "gpus": [
                    _gpu(
                        seed,
                        n,
                        g,
                        minute,
                        mode=mode,
                        slow=slow,
                        mem_gib=mem_gib,
                        mem_total=mem_total,
                    )
                    for g in range(GPUS_PER_NODE)
                ],
            }
        )
    replicas_out = []
    for r in fleet["replicas"]:
        lost = r["state"] == "lost"
        beat = (
            max(0.0, t - float(r["since_t"]))
            if lost
            else round(0.2 + 2.5 * uniform(seed, "beat", r["replica_id"], minute), 2)
        )
        replicas_out.append(
            {
                "replica_id": r["replica_id"],
                "state": r["state"],
                "step": step_now if r["step"] is None else int(r["step"]),
                "heartbeat_age_s": round(beat, 1),
                "nodes": by_replica.get(r["replica_id"], []),
            }
        )
    q = fleet["quorum"]
    healthy = sum(1 for r in fleet["replicas"] if r["state"] == "healthy")
    # The lighthouse's own words: what the quorum's numbers (which the client shows
    # beside them) do not say.
    out = len(fleet["replicas"]) - int(q["participants"])
    status = "all replicas in quorum" if out <= 0 else f"{out} of {len(fleet['replicas'])} out"
    if q["participants"] < q["min_replicas"]:
        status += ", below min_replicas: training stopped"
    elif healthy < len(fleet["replicas"]):
        status += f", {len(fleet['replicas']) - healthy} not healthy"
    return {
        "ts": iso(now),
        "sim_ts": iso(created + timedelta(seconds=t)),
        "last_event_seq": int(run["last_event_seq"]),
        "quorum": {
            "quorum_id": int(q["quorum_id"]),
            "participants": int(q["participants"]),
            "min_replicas": int(q["min_replicas"]),
            "age_s": round(max(0.0, t - float(q["since_t"])), 1),
            "status_text": status,
        },
        "replicas": replicas_out,
        "nodes": nodes_out,
    }
