"""Checkpoints, faults, loss spikes, proposals, budget marks and the ends of a run."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from decimal import ROUND_CEILING, Decimal
from typing import Any

from .core import JsonDict, iso, money
from .physics import SLO_DETECT_S, SLO_RESUME_S, SPIKE_ESCALATE_Z, SPIKE_WINDOW, uniform
from .stages import GATE_S_PER_BENCHMARK, StageFlow

CHECKPOINT_BYTES_PER_PARAM = 12.0
RESTORE_S = 240.0
CANCEL_S = 30.0
EXECUTE_DELAY_S = 30.0
BUDGET_MARKS = (0.8, 0.95, 1.0)


class IncidentFlow(StageFlow):
    """Everything that interrupts the happy path, and how the run ends."""

    # ------------------------------------------------------------ incidents in training

    def pick_incident(self, train: JsonDict) -> JsonDict | None:
        frac = train["step"] / train["total_steps"]
        for incident in self.s["incidents"]:
            if incident.get("done"):
                continue
            if incident["stage"] in (train["stage"], None) and incident["frac"] <= frac:
                incident["done"] = True
                return dict[str, Any](incident)
        return None

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

    def rollback_target(self) -> tuple[str | None, int]:
        """The latest checkpoint of this stage at or before the current step (else stage start)."""
        train = self.s["train"]
        best: tuple[str | None, int] = (None, 0)
        for ckpt in self.s["all_ckpts"]:
            if ckpt["stage"] != train["stage"]:
                best = (ckpt["id"], 0) if best[0] is None else best
            elif ckpt["step"] <= train["step"]:
                best = (ckpt["id"], int(ckpt["step"]))
        return best

    def step_time(self) -> float:
        train = self.s["train"]
        return float(train["q"]) / max(1e-9, float(train["total_steps"] / train["n_quanta"]))

    # ------------------------------------------------------------ node failures

    def node_failure(self, incident: JsonDict) -> None:
        self.stop_training()
        self.s["fault_n"] += 1
        self.s["interruptions"] += 1
        nodes: list[str] = self.s["nodes"]
        node = (
            incident.get("node")
            or nodes[int(uniform(self.seed, "node", self.s["fault_n"]) * len(nodes))]
        )
        fault: JsonDict = {
            "fault_id": f"flt_{self.run['run_id'][4:]}_{self.s['fault_n']}",
            "kind": "node_failure",
            "node": node,
            "step": int(self.s["train"]["step"]),
            "detected_after_s": None,
            "resumed_after_s": None,
            "lost_steps": None,
            "recovered": False,
            "slo_breached": [],
        }
        self.run["faults"].append(fault)
        detect, resume = float(incident["detect_s"]), float(incident["resume_s"])
        self.schedule(detect, "fault_detected", fault_id=fault["fault_id"], detect_s=detect)
        self.schedule(
            detect + resume, "fault_recovered", fault_id=fault["fault_id"], resume_s=resume
        )

    def fault(self, fault_id: str) -> JsonDict:
        live: JsonDict = next(f for f in self.run["faults"] if f["fault_id"] == fault_id)
        return live

    def on_fault_detected(self, args: JsonDict) -> None:
        fault, detect = self.fault(args["fault_id"]), float(args["detect_s"])
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
        self.set_state("recovering", f"{fault['node']} failed; replacing node and restarting")

    def on_fault_recovered(self, args: JsonDict) -> None:
        fault, resume = self.fault(args["fault_id"]), float(args["resume_s"])
        train = self.s["train"]
        _ckpt, to_step = self.rollback_target()
        lost = int(train["step"]) - to_step
        train["step"] = float(to_step)
        fault.update(resumed_after_s=resume, lost_steps=lost, recovered=True)
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
        self.set_state("running", f"resumed from step {to_step}")
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
        ckpt_id, to_step = self.rollback_target()
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

    # ------------------------------------------------------------ proposals

    def create_proposal(
        self, kind: str, *, trigger: JsonDict, action: JsonDict, impact: JsonDict, paused: bool
    ) -> JsonDict:
        self.s["prop_n"] += 1
        ttl = float(self.s["ttl_s"])
        wall_ttl = ttl / max(1e-9, self.human_speed())
        proposal = {
            "proposal_id": f"prop_{self.run['run_id'][4:]}_{self.s['prop_n']}",
            "run_id": self.run["run_id"],
            "kind": kind,
            "status": "pending",
            "created_at": iso(self.now),
            "expires_at": iso(self.now + timedelta(seconds=wall_ttl)),
            "on_expiry": "reject",
            "trigger": trigger,
            "action": action,
            "impact": impact,
            "run_paused": paused,
            "decided_by": None,
            "decided_at": None,
            "comment": None,
        }
        self.s["proposals"][proposal["proposal_id"]] = proposal
        self.out_proposals.add(proposal["proposal_id"])
        self.emit("proposal.created", {"proposal": proposal})
        self.schedule(ttl, "proposal_expire", proposal_id=proposal["proposal_id"])
        return proposal

    def human_speed(self) -> float:
        speed = float(self.s["speed"])
        approval = self.s.get("approval_speed")
        return speed if approval is None else min(speed, float(approval))

    def proposal_changed(self, proposal: JsonDict, type_: str) -> None:
        self.out_proposals.add(proposal["proposal_id"])
        self.emit(type_, {"proposal": proposal})

    def on_proposal_expire(self, args: JsonDict) -> None:
        proposal = self.s["proposals"][args["proposal_id"]]
        if proposal["status"] != "pending":
            return
        proposal["status"] = "expired"
        self.proposal_changed(proposal, "proposal.expired")
        self.after_decline(proposal, "proposal expired (on_expiry: reject): continuing")

    def after_decline(self, proposal: JsonDict, reason: str) -> None:
        if proposal["run_paused"] and self.state == "awaiting_approval":
            self.set_state("running", reason)
            self.arm_quantum()

    def on_execute(self, args: JsonDict) -> None:
        proposal = self.s["proposals"][args["proposal_id"]]
        proposal["status"] = "executed"
        self.proposal_changed(proposal, "proposal.executed")
        to_step = proposal["action"]["rollback_to_step"]
        self.set_state(
            "recovering",
            f"rolling back to step {to_step} and skipping "
            f"{proposal['action']['skip_batches']} batches",
        )
        self.schedule(RESTORE_S, "rollback_done", proposal_id=proposal["proposal_id"])

    def on_rollback_done(self, args: JsonDict) -> None:
        proposal = self.s["proposals"][args["proposal_id"]]
        train = self.s["train"]
        to_step = int(proposal["action"]["rollback_to_step"])
        self.badput("rewind_recompute", (train["step"] - to_step) * self.step_time())
        self.badput("restart", RESTORE_S)
        train["step"] = float(to_step)
        self.progress()
        self.set_state("running", f"resumed from step {to_step}")
        self.arm_quantum()

    # ------------------------------------------------------------ budget

    def remaining_s(self) -> float:
        """Simulated seconds of planned work left (current stage, later stages, gates)."""
        left = 0.0
        train = self.s.get("train")
        idx = int(self.s["stage_idx"])
        if train and idx >= 0 and self.s["pipeline"][idx]["name"] == train["stage"]:
            per_q = train["total_steps"] / train["n_quanta"] * train["throughput"]
            left += (train["total_steps"] - train["step"]) / max(per_q, 1e-9) * train["q"]
        for entry in self.s["pipeline"][idx + 1 :]:
            if not entry["skip"]:
                squeeze = float(self.s["squeeze"]) if entry["kind"] == "train" else 1.0
                left += float(entry["duration_s"]) / squeeze
                left += 4 * GATE_S_PER_BENCHMARK if entry["kind"] == "train" else 0.0
        return left

    def schedule_budget(self) -> None:
        self.s["budget_gen"] += 1
        rate = self.rate_usd_per_s()
        budget = Decimal(self.s["budget"])
        for frac in BUDGET_MARKS:
            if frac in self.s["warned"]:
                continue
            at = float(budget * Decimal(str(frac)) / rate)
            self.schedule(max(0.0, at - self.t), "budget", frac=frac, gen=self.s["budget_gen"])

    def on_budget(self, args: JsonDict) -> None:
        if args["gen"] != self.s["budget_gen"]:
            return
        frac = float(args["frac"])
        budget = Decimal(self.s["budget"])
        if frac >= 1.0:
            self.finish_failed(
                "budget_exhausted", f"spend reached the budget ceiling of ${money(budget)}"
            )
            return
        self.s["warned"].append(frac)
        self.emit(
            "budget.warning",
            {"threshold_frac": frac, "usd_spent": money(self.spent()), "budget_usd": money(budget)},
        )
        if self.s["scenario"] == "budget" and frac == BUDGET_MARKS[0]:
            projected = self.spent() + self.rate_usd_per_s() * Decimal(str(self.remaining_s()))
            extra = ((projected - budget) * Decimal("1.1") / 100).to_integral_value(
                ROUND_CEILING
            ) * 100
            if extra > 0:
                hours = float(extra / self.rate_usd_per_s()) * int(self.s["gpus"]) / 3600
                self.create_proposal(
                    "extend_budget",
                    trigger={
                        "reason": f"projected spend ${money(projected)} exceeds the "
                        f"${money(budget)} budget at the current throughput"
                    },
                    action={"extra_budget_usd": money(extra)},
                    impact={
                        "lost_steps": 0,
                        "added_gpu_hours": round(hours, 1),
                        "added_usd": money(extra),
                    },
                    paused=False,
                )

    def budget_squeeze(self) -> None:
        """The `budget` scenario: a degraded node slows training so the run overruns by ~15%."""
        train = self.s["train"]
        rate = float(self.rate_usd_per_s())
        left = self.remaining_s()
        train_left = (
            (train["total_steps"] - train["step"])
            / (train["total_steps"] / train["n_quanta"])
            * train["q"]
        )
        train_left += sum(
            float(e["duration_s"])
            for e in self.s["pipeline"][int(self.s["stage_idx"]) + 1 :]
            if not e["skip"] and e["kind"] == "train"
        )
        need = (1.15 * float(Decimal(self.s["budget"])) - float(self.spent())) / rate
        need -= left - train_left
        factor = max(0.3, min(1.0, train_left / need)) if need > 0 else 0.3
        self.s["squeeze"] = factor
        train["throughput"] = factor
        self.emit(
            "plan.warning",
            {
                "code": "throughput.degraded",
                "message": f"a straggler node holds the step rate at {factor:.0%} of "
                "plan; projected spend now exceeds the budget",
            },
        )

    # ------------------------------------------------------------ the end

    def expire_pending(self) -> None:
        for proposal in self.s["proposals"].values():
            if proposal["status"] == "pending":
                proposal["status"] = "expired"
                proposal["comment"] = "run ended before a decision"
                self.proposal_changed(proposal, "proposal.expired")

    def end(self, state: str, reason: str) -> None:
        self.stop_training()
        self.expire_pending()
        self.set_state(state, reason)
        self.touch()
        self.s["done"] = True
        self.s["queue"] = []

    def finish_completed(self) -> None:
        self.end("completed", "all stages passed their gates")
        self.emit("run.completed", {"spend": self.run["spend"], "detail": "all gates passed"})

    def finish_failed(self, kind: str, detail: str, *, gate_id: str | None = None) -> None:
        current = self.run.get("current_stage")
        if kind != "gate_failed" and current:
            stage = self.stage(current)
            if stage["state"] in ("running", "gate_eval"):
                stage["state"] = "failed"
                stage["ended_at"] = iso(self.sim_time())
                self.emit("stage.failed", {"stage": current, "reason": detail})
        failure = {"kind": kind, "gate_id": gate_id, "detail": detail}
        self.run["failure"] = failure
        self.end("failed", detail)
        self.emit("run.failed", {"spend": self.run["spend"], "failure": failure, "detail": detail})

    def on_cancel_finish(self, args: JsonDict) -> None:
        current = self.run.get("current_stage")
        if current:
            stage = self.stage(current)
            if stage["state"] in ("running", "gate_eval"):
                stage["state"] = "cancelled"
                stage["ended_at"] = iso(self.sim_time())
        detail = str(args.get("reason") or "cancelled by operator")
        failure = {"kind": "cancelled", "gate_id": None, "detail": detail}
        self.run["failure"] = failure
        self.end("cancelled", detail)
        self.emit(
            "run.cancelled", {"spend": self.run["spend"], "failure": failure, "detail": detail}
        )
