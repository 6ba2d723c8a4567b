"""Incidents during training: checkpoints, node failures and loss spikes."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from .core import JsonDict, iso, money
from .fleet_flow import FleetFlow
from .physics import SLO_DETECT_S, SLO_RESUME_S, SPIKE_ESCALATE_Z, SPIKE_WINDOW, uniform

CHECKPOINT_BYTES_PER_PARAM = 12.0
CANCEL_S = 30.0


WATCH_HOLD = 2
WATCH_HOLD_S = 3.0
"""Quanta, and wall seconds, a watched incident's slowest pace is held before it fires
(see `watch_ahead`)."""
HANG_DETECT_S = 720.0
"""The backend's own hang detection fires 12 simulated minutes after progress stopped."""


class IncidentFlow(FleetFlow):
    """Everything that interrupts the happy path of a training stage."""

    # ------------------------------------------------------------ incidents in training

    def pick_incident(self, train: JsonDict) -> JsonDict | None:
        frac = train["step"] / train["total_steps"]
        ahead = float(train["throughput"]) / float(train["n_quanta"])
        for incident in self.s["incidents"]:
            if incident.get("done"):
                continue
            self.watch_ahead(incident, train, (float(incident["frac"]) - frac) / ahead)
            if incident["stage"] in (train["stage"], None) and incident["frac"] <= frac:
                incident["done"] = True
                return dict[str, Any](incident)
        return None

    def watch_ahead(self, incident: JsonDict, train: JsonDict, left: float) -> None:
        """Slow the clock before a watched incident `left` quanta ahead (its `lead`).

        Step by step over `lead` quanta, then the slowest pace is held for WATCH_HOLD_S of
        wall time (at least WATCH_HOLD quanta): a client that extrapolates its clock at the
        last pace it measured (on events a second apart) sees at most ~2 quanta of
        "silence" in each wait, and has measured the final pace before the incident goes
        quiet. Only the clock's rate changes: the events are the same at any speed.
        """
        ramp = float(incident.get("lead", 0))
        if not ramp or incident["stage"] not in (train["stage"], None):
            return
        watch = float(incident["watch"])
        pace = float(self.s["speed"]) / watch
        hold = max(WATCH_HOLD, math.ceil(WATCH_HOLD_S * pace / float(train["q"])))
        if left < ramp + hold:
            step = min(1.0, (ramp + hold - max(0.0, left)) / ramp)
            self.s["watch"] = watch**step

    def handle_incident(self, incident: JsonDict) -> str | None:
        """Apply a non-fatal incident after this quantum's telemetry; "pause" stops the loop."""
        kind = incident["kind"]
        if kind == "loss_spike":
            return self.loss_spike(float(incident["z"]), bool(incident.get("escalate", False)))
        if kind == "gate_fail":
            self.s["fail_gates"].append(self.s["train"]["stage"])
        elif kind == "slow_checkpoint":
            self.s["slow_ckpt"] = float(incident.get("factor", 6.0))
        elif kind == "budget_squeeze":
            self.budget_squeeze()
            # The squeeze's "straggler node" is one in the fleet too: flagged from the next
            # quantum on, at the squeeze's pace (already in the throughput: priced).
            peak = 1.0 / max(0.05, float(self.s["squeeze"]))
            if peak > 1.0:
                self.fleet_throttle(
                    {"peak": peak, "ramp": 0.0, "hold": 0.0, "clears": False, "priced": True}
                )
        elif kind == "straggler":
            self.fleet_throttle(incident)
        return None

    # ------------------------------------------------------------ checkpoints

    def save_checkpoint(self) -> None:
        train = self.s["train"]
        self.s["ckpt_n"] += 1
        size_gb = round(CHECKPOINT_BYTES_PER_PARAM * float(self.s["params"]) / 1e9, 2)
        bandwidth = (
            4.0
            * math.sqrt(len(self.s["nodes"]))
            * (0.9 + 0.2 * uniform(self.seed, "ckpt-bw", self.s["ckpt_n"]))
        )
        blocking = 4.2 + 1.6 * uniform(self.seed, "ckpt-block", self.s["ckpt_n"])
        slow = self.s.get("slow_ckpt")
        if slow:
            bandwidth /= slow
            blocking *= 4
            self.s["slow_ckpt"] = None
        persist = size_gb / bandwidth
        ckpt = {
            "checkpoint_id": f"ckpt_{self.run['run_id'][4:]}_{self.s['ckpt_n']:04d}",
            "stage": train["stage"],
            "step": int(train["step"]),
            "created_at": iso(self.sim_time()),
            "size_gb": size_gb,
            "blocking_s": round(blocking, 2),
            "persist_s": round(persist, 1),
        }
        self.emit("checkpoint.saved", {"checkpoint": ckpt, "write_gb_per_s": round(bandwidth, 2)})
        self.out_checkpoints.append((ckpt["checkpoint_id"], json.dumps(ckpt)))
        self.s["all_ckpts"].append(
            {"id": ckpt["checkpoint_id"], "stage": train["stage"], "step": ckpt["step"]}
        )
        self.s["ckpt_last"] = {
            "last_step": ckpt["step"],
            "size_gb": size_gb,
            "blocking_s": ckpt["blocking_s"],
            "persist_s": ckpt["persist_s"],
            "write_gb_per_s": round(bandwidth, 2),
            "t": self.t,
        }
        self.badput("checkpoint_blocking", blocking)

    def rollback_target(self, *, strictly_before: bool = False) -> tuple[str | None, int]:
        """The latest checkpoint of this stage at (or strictly before) the current step.

        Without one, the stage's start: the previous stage's last checkpoint, step 0.
        A loss spike rolls back strictly before its step: a checkpoint taken at the
        spike already holds the damaged weights.
        """
        train = self.s["train"]
        step = int(train["step"])
        best: tuple[str | None, int] = (None, 0)
        for ckpt in self.s["all_ckpts"]:  # chronological
            if ckpt["stage"] != train["stage"]:
                best = (ckpt["id"], 0)
            elif (ckpt["step"] < step or (ckpt["step"] == step and not strictly_before)) and (
                ckpt["step"] >= best[1]
            ):
                best = (ckpt["id"], int(ckpt["step"]))
        return best

    # ------------------------------------------------------------ node failures

    def node_failure(self, incident: JsonDict) -> None:
        """A node fails (or, kind "hang", every rank stops in a collective): training stops
        now; detection and recovery follow at the incident's simulated offsets."""
        hang = incident["kind"] == "hang"
        detect = HANG_DETECT_S if hang else float(incident["detect_s"])
        resume = float(incident.get("resume_s", 360.0) if hang else incident["resume_s"])
        self.stop_training()
        self.s["fault_n"] += 1
        self.s["interruptions"] += 1
        node = self.pick_node(incident.get("node"), "hang" if hang else "node")
        fault: JsonDict = {
            "fault_id": f"flt_{self.run['run_id'][4:]}_{self.s['fault_n']}",
            "kind": "hang" if hang else "node_failure",
            "node": node,
            "step": int(self.s["train"]["step"]),
            "detected_after_s": None,
            "resumed_after_s": None,
            "lost_steps": None,
            "recovered": False,
            "slo_breached": [],
        }
        self.run["faults"].append(fault)
        # A scenario may want this failure watched: the clock runs `watch` times slower
        # until it is recovered. A hang slows down before it (its `lead`: a client must
        # have measured the slower clock before the run goes quiet); a node failure from
        # its detection on (showcase: ~9 s of demo time, the spare joining in between), as
        # a slower clock while the run still reads `running` looks to a client extrapolating
        # the faster one like hours of silence.
        if incident.get("lead"):
            self.s["watch"] = incident.get("watch")
        else:
            self.s["watch_next"] = incident.get("watch")
        if hang:
            # Heartbeats go on (the processes live); no step, telemetry or progress until
            # the backend's own watchdog notices, HANG_DETECT_S later.
            self.s["hang"] = fault["fault_id"]
        else:
            self.fleet_node_failed(fault, detect, resume)
        self.schedule(detect, "fault_detected", fault_id=fault["fault_id"], detect_s=detect)
        self.schedule(
            detect + resume, "fault_recovered", fault_id=fault["fault_id"], resume_s=resume
        )

    def fault(self, fault_id: str) -> JsonDict:
        live: JsonDict = next(f for f in self.run["faults"] if f["fault_id"] == fault_id)
        return live

    def on_fault_detected(self, args: JsonDict) -> None:
        fault, detect = self.fault(args["fault_id"]), float(args["detect_s"])
        if self.s.get("watch_next"):
            self.s["watch"], self.s["watch_next"] = self.s["watch_next"], None
        fault["detected_after_s"] = detect
        self.emit(
            "fault.detected",
            {
                "fault_id": fault["fault_id"],
                "kind": fault["kind"],
                "node": fault["node"],
                "step": fault["step"],
                "detected_after_s": detect,
            },
        )
        self.badput("failure_detection", detect)
        if detect > SLO_DETECT_S:
            fault["slo_breached"].append("detect")
            self.emit(
                "slo.breached",
                {
                    "slo": "detect",
                    "fault_id": fault["fault_id"],
                    "value_s": detect,
                    "limit_s": SLO_DETECT_S,
                },
            )
        if fault["kind"] == "hang":
            self.s["hang"] = None
            why = f"no progress on any rank (collective hung on {fault['node']}); restarting"
        else:
            why = f"{fault['node']} failed; replacing node and restarting"
        self.set_state("recovering", why)

    def on_fault_recovered(self, args: JsonDict) -> None:
        fault, resume = self.fault(args["fault_id"]), float(args["resume_s"])
        train = self.s["train"]
        _ckpt, to_step = self.rollback_target()
        lost = int(train["step"]) - to_step
        train["step"] = float(to_step)
        fault.update(resumed_after_s=resume, lost_steps=lost, recovered=True)
        self.fleet_fault_recovered(fault)
        self.s["watch"] = None
        self.emit(
            "fault.recovered",
            {
                "fault_id": fault["fault_id"],
                "kind": fault["kind"],
                "node": fault["node"],
                "resumed_after_s": resume,
                "lost_steps": lost,
                "resumed_from_step": to_step,
            },
        )
        self.badput("node_replacement", 0.4 * resume)
        self.badput("restart", 0.6 * resume)
        self.badput("rewind_recompute", lost * self.step_time())
        if resume > SLO_RESUME_S:
            fault["slo_breached"].append("resume")
            self.emit(
                "slo.breached",
                {
                    "slo": "resume",
                    "fault_id": fault["fault_id"],
                    "value_s": resume,
                    "limit_s": SLO_RESUME_S,
                },
            )
        self.set_state("running", f"resumed from step {int(to_step):,}")
        self.arm_quantum()

    # ------------------------------------------------------------ loss spikes

    def loss_spike(self, z: float, force_escalate: bool) -> str | None:
        train = self.s["train"]
        step = int(train["step"])
        escalate = force_escalate or z >= SPIKE_ESCALATE_Z
        loss = float(self.s.get("last_loss", 0.0))
        self.emit(
            "loss.spike_detected",
            {
                "step": step,
                "loss": loss,
                "loss_z": z,
                "window": SPIKE_WINDOW,
                "action": "escalated" if escalate else "skipped",
            },
        )
        if not escalate:
            return None
        ckpt_id, to_step = self.rollback_target(strictly_before=True)
        lost = step - to_step
        added_h = lost * self.step_time() * int(self.s["gpus"]) / 3600
        skip = 200 + int(300 * uniform(self.seed, "skip", step))
        self.create_proposal(
            "rollback_and_skip",
            trigger={
                "reason": f"loss spike z={z:.1f} over a {SPIKE_WINDOW}-step window "
                f"(escalation threshold z >= {SPIKE_ESCALATE_Z:.0f})",
                "step": step,
                "loss": loss,
                "loss_z": z,
                "window": SPIKE_WINDOW,
            },
            action={
                "rollback_to_step": to_step,
                "checkpoint_id": ckpt_id,
                "skip_batches": skip,
                "lr_scale": None,
            },
            impact={
                "lost_steps": lost,
                "added_gpu_hours": round(added_h, 2),
                "added_usd": money(Decimal(str(added_h)) * Decimal(self.s["price"])),
            },
            paused=True,
        )
        self.stop_training()
        self.set_state("awaiting_approval", "loss spike escalated: rollback needs a decision")
        return "pause"
