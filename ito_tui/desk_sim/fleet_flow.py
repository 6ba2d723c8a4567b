"""The engine's fleet mixin: node failures, stragglers and the torchft quorum as events.

Every change to `s["fleet"]` (see `fleet.py`) happens here, next to the event that
announces it, so `fleet.snapshot` agrees with the run's event stream at every seq.

A node failure is one chain (API.md v1.1), at simulated offsets from the failure,
with D the detection time and R the resume time of the fault:
  0        `node.failed` (Xid on one GPU; its replica `lost`; the peer's NCCL watchdog
           times out), then `straggler.cleared` if the node was a straggler
  0.3 D    `quorum.changed`: the quorum shrinks to the replicas left
  D        `fault.detected` (incidents.py), the run `recovering`
  D + 0.4R `node.replaced`: a spare takes the node's slot (and ranks); the replica
           `recovering` (it heals from its peers' checkpoint)
  D + 0.8R `quorum.changed`: the quorum grows back
  D + R    `fault.recovered`; the replica `healthy`. The failed node stays listed as
           `replaced`, the spare `healthy`.
A straggler (thermal throttling) is judged once per training quantum against the
fleet's median step time: `node.degraded` at 1.12x, `straggler.detected` at 1.3x,
`straggler.cleared` under 1.15x, `node.recovered` under 1.05x once the throttle ends.
"""

from __future__ import annotations

from . import fleet as fl
from .core import JsonDict
from .outcomes import OutcomeFlow
from .physics import uniform

XID_FELL_OFF_THE_BUS = 79


class FleetFlow(OutcomeFlow):
    """Fleet state changes and their events (mixed into the engine)."""

    def fleet(self) -> JsonDict:
        return fl.ensure(self.s)

    def fleet_pace(self) -> float:
        """Synchronous training steps at the pace of its slowest active node."""
        fleet = self.fleet()
        slowest = max(
            (
                fl.slow_factor(n, self.t)
                for n in fleet["nodes"]
                # A throttle already priced into the stage's throughput (the budget
                # scenario's squeeze) must not slow it twice.
                if n["state"] in fl.ACTIVE and not (n.get("throttle") or {}).get("priced")
            ),
            default=1.0,
        )
        return 1.0 / max(1.0, slowest)

    def pick_node(self, wanted: object, label: str) -> str:
        """`wanted` if the fleet has it active (full or short name), the throttled node for
        "straggler", else a seeded pick among the active nodes."""
        active = fl.active_hostnames(self.s)
        if wanted == "straggler":
            throttled = [n["hostname"] for n in self.fleet()["nodes"] if n.get("throttle")]
            active_throttled = [h for h in throttled if h in active]
            if active_throttled:
                return str(active_throttled[0])
        elif isinstance(wanted, str) and wanted.split(".", 1)[0] in active:
            return wanted.split(".", 1)[0]
        return str(active[int(uniform(self.seed, label, self.s["fault_n"]) * len(active))])

    # ------------------------------------------------------------ node failure chain

    def fleet_node_failed(self, fault: JsonDict, detect_s: float, resume_s: float) -> None:
        """The start of the chain (call before scheduling fault.detected/recovered)."""
        hostname = str(fault["node"])
        node = fl.node(self.s, hostname)
        if node is None:
            return
        gpu = int(uniform(self.seed, "xid-gpu", self.s["fault_n"]) * fl.GPUS_PER_NODE)
        node["xid"][str(gpu)] = int(node["xid"].get(str(gpu), 0)) + 1
        was_straggler = bool(node["straggler"])
        node.update(state="failed", straggler=False, throttle=None, slow=1.0, xid_gpu=gpu)
        peer = fl.peer_of(self.s, hostname)
        if peer is not None:
            peer_node = fl.node(self.s, peer)
            assert peer_node is not None
            peer_node["nccl_timeouts"] = int(peer_node["nccl_timeouts"]) + 1
        replica = self.replica(str(node["replica_id"]))
        train = self.s.get("train") or {}
        replica.update(state="lost", step=int(train.get("step", 0)), since_t=self.t)
        self.emit(
            "node.failed",
            {
                "hostname": hostname,
                "replica_id": node["replica_id"],
                "reason": f"Xid {XID_FELL_OFF_THE_BUS} on GPU {gpu}: GPU has fallen off the bus",
                "fault_id": fault["fault_id"],
            },
        )
        if was_straggler:
            self.emit("straggler.cleared", {"hostname": hostname})
        fid = fault["fault_id"]
        self.schedule(0.3 * detect_s, "fleet_quorum", fault_id=fid)
        self.schedule(detect_s + 0.4 * resume_s, "fleet_replace", fault_id=fid)
        self.schedule(detect_s + 0.8 * resume_s, "fleet_quorum", fault_id=fid)

    def replica(self, replica_id: str) -> JsonDict:
        found: JsonDict = next(r for r in self.fleet()["replicas"] if r["replica_id"] == replica_id)
        return found

    def on_fleet_quorum(self, _args: JsonDict) -> None:
        fleet = self.fleet()
        quorum = fleet["quorum"]
        quorum["quorum_id"] = int(quorum["quorum_id"]) + 1
        quorum["participants"] = sum(1 for r in fleet["replicas"] if r["state"] != "lost")
        quorum["since_t"] = self.t
        self.emit(
            "quorum.changed",
            {
                "quorum_id": quorum["quorum_id"],
                "participants": quorum["participants"],
                "min_replicas": quorum["min_replicas"],
            },
        )

    def on_fleet_replace(self, args: JsonDict) -> None:
        fault = next(f for f in self.run["faults"] if f["fault_id"] == args["fault_id"])
        failed = fl.node(self.s, str(fault["node"]))
        if failed is None:
            return
        fleet = self.fleet()
        spare = fl.spare_name(self.s)
        fleet["spares"] = int(fleet["spares"]) + 1
        failed["state"] = "replaced"
        fleet["nodes"].append(
            {
                "hostname": spare,
                "slot": failed["slot"],
                "replica_id": failed["replica_id"],
                "state": "healthy",
                "straggler": False,
                "slow": 1.0,
                "throttle": None,
                "nccl_timeouts": 0,
                "xid": {},
                "ecc": {},
                "spare": True,
            }
        )
        _ckpt, to_step = self.rollback_target()
        self.replica(str(failed["replica_id"])).update(state="recovering", step=to_step)
        self.emit(
            "node.replaced",
            {
                "hostname": failed["hostname"],
                "replica_id": failed["replica_id"],
                "replaced_by": spare,
                "reason": f"spare {spare} joined replica {failed['replica_id']}",
                "fault_id": fault["fault_id"],
            },
        )

    def fleet_fault_recovered(self, fault: JsonDict) -> None:
        """The end of a chain: every replica that was not healthy is healthy again."""
        for replica in self.fleet()["replicas"]:
            if replica["state"] != "healthy":
                replica.update(state="healthy", step=None, since_t=self.t)

    # ------------------------------------------------------------ stragglers

    def fleet_throttle(self, incident: JsonDict) -> None:
        """Start thermal throttling on one node (the `straggler` incident)."""
        train = self.s["train"]
        stage_s = float(train["q"]) * float(train["n_quanta"])
        active = [
            n for n in self.fleet()["nodes"] if n["state"] == "healthy" and not n.get("throttle")
        ]
        if not active:
            return
        node = active[int(uniform(self.seed, "throttle", self.t) * len(active))]
        node["throttle"] = {
            "start_t": self.t,
            "ramp_s": float(incident.get("ramp", 0.15)) * stage_s,
            "hold_s": float(incident.get("hold", 0.1)) * stage_s,
            "peak": float(incident.get("peak", 1.6)),
            "clears": bool(incident.get("clears", True)),
            "priced": bool(incident.get("priced", False)),
            "gpu": int(uniform(self.seed, "throttle-gpu", self.t) * fl.GPUS_PER_NODE),
        }

    def fleet_quantum(self) -> None:
        """Judge every throttled node against the fleet median (once per quantum)."""
        for node in self.fleet()["nodes"]:
            throttle = node.get("throttle")
            if not throttle or node["state"] not in fl.ACTIVE:
                continue
            p50 = fl.node_step_p50(self.s, node, self.t)
            # Against the others' median: with two nodes the straggler would pull its own
            # reference halfway up. A one-node fleet has no straggler, only a slow node.
            median = fl.fleet_p50(self.s, self.t, without=node["hostname"])
            if p50 is None or median is None:
                continue
            ratio = p50 / median
            node["slow"] = round(fl.slow_factor(node, self.t), 4)
            hostname, gpu = node["hostname"], int(throttle["gpu"])
            timing = {
                "hostname": hostname,
                "rank": int(node["slot"]) * fl.GPUS_PER_NODE + gpu,
                "step_time_s": round(p50, 3),
                "fleet_p50_s": round(median, 3),
            }
            if node["state"] == "healthy" and ratio >= fl.DEGRADED_AT:
                node["state"] = "degraded"
                self.emit(
                    "node.degraded",
                    {
                        "hostname": hostname,
                        "replica_id": node["replica_id"],
                        "reason": f"thermal throttling on GPU {gpu}: SM clocks down, "
                        f"step time {ratio:.2f}x the fleet median",
                    },
                )
            if not node["straggler"] and ratio >= fl.STRAGGLER_AT:
                node["straggler"] = True
                self.emit("straggler.detected", timing)
            elif node["straggler"] and ratio < fl.STRAGGLER_CLEAR_AT:
                node["straggler"] = False
                self.emit("straggler.cleared", timing)
            ended = self.t >= float(throttle["start_t"]) + 1.5 * float(throttle["ramp_s"]) + float(
                throttle["hold_s"]
            )
            if throttle["clears"] and ended and ratio < fl.RECOVERED_AT:
                node.update(throttle=None, slow=1.0)
                if node["state"] == "degraded":
                    node["state"] = "healthy"
                    self.emit(
                        "node.recovered",
                        {
                            "hostname": hostname,
                            "replica_id": node["replica_id"],
                            "reason": "GPU temperatures back to normal; step time at the "
                            "fleet median",
                        },
                    )

    # Implemented by the incident mixin (incidents.py).
    def rollback_target(self, *, strictly_before: bool = False) -> tuple[str | None, int]:
        raise NotImplementedError
