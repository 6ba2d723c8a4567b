"""Proposals (human-gated actions), budget marks and the ends of a run."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_CEILING, Decimal

from .core import JsonDict, iso, money
from .stages import GATE_S_PER_BENCHMARK
from .training import TrainingFlow

RESTORE_S = 240.0
EXECUTE_DELAY_S = 30.0
BUDGET_MARKS = (0.8, 0.95, 1.0)


class OutcomeFlow(TrainingFlow):
    """Proposals and their decisions, budget warnings and exhaustion, completion and cancel."""

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
        # decided_at says when expiry decided it (no decided_by: nobody did), so a trail
        # shows when an unanswered proposal went, not only when it was due to.
        proposal.update(status="expired", decided_at=iso(self.now))
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
            f"rolling back to step {int(to_step):,} and skipping "
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
        self.set_state("running", f"resumed from step {to_step:,}")
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
                "budget_exhausted",
                f"spend reached the budget ceiling of ${Decimal(money(budget)):,}",
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
                        "reason": f"projected spend ${Decimal(money(projected)):,} exceeds the "
                        f"${Decimal(money(budget)):,} budget at the current throughput"
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
                proposal.update(
                    status="expired",
                    decided_at=iso(self.now),
                    comment="run ended before a decision",
                )
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
