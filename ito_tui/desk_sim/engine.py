"""The run simulator: creation from a spec, `advance(until)`, decisions, cancel, injection.

`Engine.create` builds the initial state; `advance` handles every queued item up
to a simulated time; `to_state`/`from_state` round-trip it through JSON so the
server can commit it with the events it produced in one transaction.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from ito_tui.contract import (
    STAGE_ORDER,
    TRAINING_STAGES,
    Booking,
    Estimate,
    EventBase,
    TrainingSpec,
    model_params,
)

from . import fleet
from .catalog import GPU_SKUS, TARGET_PROFILES
from .core import JsonDict, iso, money
from .incidents import CANCEL_S, IncidentFlow
from .outcomes import EXECUTE_DELAY_S
from .scenarios import incidents_for

POST_CHAIN = {None: (), "sft": ("sft",), "dpo": ("sft", "dpo"), "rlvr": ("sft", "dpo", "rlvr")}
STAGE_TOKEN_SHARE = {
    "mid_train": 0.1,
    "long_context": 0.02,
    "sft": 0.004,
    "dpo": 0.002,
    "rlvr": 0.003,
}
MAX_ITEMS_PER_ADVANCE = 20_000


class DecisionError(Exception):
    """A decision the current state does not allow; `code` is the API error code."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class Engine(IncidentFlow):
    """One simulated run. Not thread-safe: the server drives it from its event loop."""

    @classmethod
    def create(
        cls,
        *,
        run_id: str,
        spec: TrainingSpec,
        booking: Booking,
        estimate: Estimate,
        operator: str,
        scenario: str,
        seed: int,
        speed: float,
        approval_speed: float | None,
        ttl_s: float,
        now: datetime,
    ) -> Engine:
        plan = estimate.plan.model_dump(mode="json") if estimate.plan else None
        params = model_params(spec.model_size)
        stages: list[JsonDict] = [
            {
                "name": s.value,
                "state": "pending",
                "started_at": None,
                "ended_at": None,
                "progress": None,
                "gate": None,
                "summary": {},
            }
            for s in STAGE_ORDER
        ]
        echo = spec.model_dump(mode="json", exclude={"sim"})
        run: JsonDict = {
            "run_id": run_id,
            "booking_id": booking.booking_id,
            "spec": echo,
            "state": "queued",
            "failure": None,
            "plan": plan,
            "estimate": estimate.model_dump(mode="json"),
            "stages": stages,
            "current_stage": None,
            "spend": None,
            "goodput": None,
            "pending_proposal_ids": [],
            "last_event_seq": 0,
            "created_at": iso(now),
            "updated_at": iso(now),
            "faults": [],
            "operator": operator,
        }
        chaos = spec.sim.chaos if spec.sim and spec.sim.chaos else 0.0
        state: JsonDict = {
            "v": 1,
            "run": run,
            "seed": seed,
            "scenario": scenario,
            "speed": speed,
            "approval_speed": approval_speed,
            "ttl_s": ttl_s,
            "clock": 0.0,
            "seq": 0,
            "queue": [],
            "qn": 0,
            "gen": 0,
            "budget_gen": 0,
            "done": False,
            "stage_idx": -1,
            "train": None,
            "tel_idx": 0,
            "ckpt_n": 0,
            "all_ckpts": [],
            "ckpt_last": None,
            "prop_n": 0,
            "fault_n": 0,
            "proposals": {},
            "warned": [],
            "fail_gates": [],
            "badput": {},
            "productive_s": 0.0,
            "interruptions": 0,
            "squeeze": 1.0,
            "slow_ckpt": None,
            "program_frac": 0.97,
            "remaining_usd": 0.0,
            "gpus": booking.gpu_count,
            "price": str(booking.price_usd_per_gpu_hour),
            "params": params,
            "budget": str(spec.budget_usd),
            "batch_tokens": plan["global_batch_tokens"] if plan else 4 * 1024 * 1024,
            "nodes": [n.hostname for n in booking.nodes]
            or [f"node-{i:02d}" for i in range(booking.node_count)],
            "incidents": incidents_for(scenario, seed=seed, chaos=chaos),
            "fleet": fleet.build(
                [n.hostname for n in booking.nodes]
                or [f"node-{i + 1:02d}" for i in range(booking.node_count)],
                mem_total_gib=sku.hbm_gib if (sku := GPU_SKUS.get(booking.gpu_sku)) else 80.0,
            ),
            "hang": None,
            "pipeline": [],
            "tokens_before": {},
        }
        engine = cls(state)
        engine.now = now
        engine.build_pipeline(spec, estimate)
        engine.emit(
            "run.accepted", {"booking_id": booking.booking_id, "state": "queued", "plan": plan}
        )
        engine.schedule(5.0, "start")
        engine.schedule_budget()
        engine.touch()
        return engine

    def build_pipeline(self, spec: TrainingSpec, estimate: Estimate) -> None:
        params = model_params(spec.model_size)
        pretrain_tokens = int(spec.target_tokens or 20 * params)
        by_stage = {str(s.stage): s for s in estimate.stages}
        plan = estimate.plan
        world = plan.world_size if plan else int(self.s["gpus"])
        tps = plan.est_tokens_per_s_per_gpu if plan else 5000.0
        profile = TARGET_PROFILES.get(spec.target_capability)
        post = POST_CHAIN[spec.post_training.value if spec.post_training else None]
        pipeline: list[JsonDict] = []
        cumulative = 0
        for name in (s.value for s in STAGE_ORDER):
            skip = ""
            if name == "ladder" and spec.data_kind.value != "custom":
                skip = "curated data: the 150M ladder pre-check is only for custom data"
            elif name == "long_context" and not (profile and profile.long_context):
                skip = f"target {spec.target_capability!r} does not ask for long context"
            elif name in ("sft", "dpo", "rlvr") and name not in post:
                skip = "not part of the requested post-training chain"
            est = by_stage.get(name)
            tokens = (
                pretrain_tokens
                if name == "pretrain"
                else int(pretrain_tokens * STAGE_TOKEN_SHARE.get(name, 0.0))
            )
            if est is not None and est.tokens > 0:
                tokens = est.tokens
            if name in {s.value for s in TRAINING_STAGES}:
                kind = "train"
                duration = tokens / max(1.0, tps * world)
                if name in ("dpo", "rlvr"):
                    duration *= {"dpo": 1.6, "rlvr": 2.8}[name]
                if est is not None and est.wall_clock_h > 0:
                    duration = est.wall_clock_h * 3600
                if name in ("pretrain", "mid_train", "long_context"):
                    self.s["tokens_before"][name] = cumulative
                    if not skip:
                        cumulative += tokens
            elif name == "data_prep":
                kind, duration = "data_prep", 1800 + pretrain_tokens / 1e9 * 15
            elif name == "ladder":
                kind, duration = "ladder", 3 * 3600.0
            else:
                kind, duration = "plan", 300.0
            pipeline.append(
                {
                    "name": name,
                    "kind": kind,
                    "skip": skip,
                    "duration_s": max(60.0, float(duration)),
                    "tokens": tokens,
                }
            )
        self.s["pipeline"] = pipeline

    # ------------------------------------------------------------ state

    @classmethod
    def from_state(cls, state: JsonDict) -> Engine:
        return cls(state)

    def to_state(self) -> JsonDict:
        return self.s

    def drain(
        self,
    ) -> tuple[
        list[EventBase], list[tuple[int, int, float, str]], list[tuple[str, str]], list[JsonDict]
    ]:
        """What changed since the last drain: events, telemetry, checkpoints, proposals."""
        out = (
            self.out,
            self.out_telemetry,
            self.out_checkpoints,
            [copy.deepcopy(self.s["proposals"][p]) for p in sorted(self.out_proposals)],
        )
        self.out, self.out_telemetry, self.out_checkpoints = [], [], []
        self.out_proposals = set()
        return out

    def wants_human(self) -> bool:
        """Whether a proposal waits for a person (the clock then runs at human speed)."""
        return any(p["status"] == "pending" for p in self.s["proposals"].values())

    def speed(self) -> float:
        """Simulated seconds per wall second now: human speed while a person decides, and
        `watch` times slower while a failure the scenario wants watched plays out."""
        base = self.human_speed() if self.wants_human() else float(self.s["speed"])
        watch = self.s.get("watch")
        return base / float(watch) if watch else base

    # ------------------------------------------------------------ time

    def advance(self, until: float, now: datetime) -> None:
        """Handle every queued item due at or before simulated time `until`.

        Each item is stamped (events, samples) at the wall moment it was due, `now` less
        its lead over `until` at this pace: a tick that came late (a loaded machine) has
        many items to catch up on, and a real trainer's samples each carry their own time,
        not one shared by a burst. The stamps never go back, nor beyond `now`.
        """
        handled = 0
        pace = self.speed()
        first = self.now
        queue: list[list[Any]] = self.s["queue"]
        while queue and queue[0][0] <= until and handled < MAX_ITEMS_PER_ADVANCE:
            at, _n, kind, args = queue.pop(0)
            self.t = float(at)
            lead = timedelta(seconds=min((until - self.t) / max(pace, 1e-9), 86_400.0))
            self.now = min(now, max(first, now - lead))
            handled += 1
            if self.state == "cancelling" and kind != "cancel_finish":
                continue
            getattr(self, f"on_{kind}")(args)
            if self.done:
                # The run's clock stops at its end, whatever this tick's wall time: its
                # last fleet snapshot (ages, counters) is the same in every replay.
                self.s["clock"] = self.t
            queue = self.s["queue"]
            if self.speed() < pace:
                # A person has to decide, or a failure is to be watched: stop here, so the
                # clock runs slower from this moment on (the next tick uses `speed()`).
                until = self.t
                break
        self.t = max(self.t, until) if handled < MAX_ITEMS_PER_ADVANCE else self.t
        self.now = now
        if not self.done:
            self.s["clock"] = self.t
            self.s["remaining_usd"] = float(self.rate_usd_per_s()) * self.remaining_s()
            self.touch()

    # ------------------------------------------------------------ commands

    def decide(
        self, proposal_id: str, *, approve: bool, operator: str, comment: str | None, now: datetime
    ) -> JsonDict:
        """Approve or reject a pending proposal; raises DecisionError with the API code."""
        self.now = now
        self.t = float(self.s["clock"])
        proposal = self.s["proposals"][proposal_id]
        if self.done:
            raise DecisionError("run.terminal", f"run {self.run['run_id']} is {self.state}")
        if proposal["status"] == "expired":
            raise DecisionError("proposal.expired", f"{proposal_id} expired unanswered")
        if proposal["status"] != "pending":
            raise DecisionError(
                "proposal.already_decided",
                f"{proposal_id} was {proposal['status']} by {proposal['decided_by']}",
            )
        proposal.update(
            status="approved" if approve else "rejected",
            decided_by=operator,
            decided_at=iso(now),
            comment=comment,
        )
        self.proposal_changed(proposal, "proposal.approved" if approve else "proposal.rejected")
        decided: JsonDict = copy.deepcopy(proposal)
        if not approve:
            self.after_decline(proposal, f"rollback rejected by {operator}: continuing")
        elif proposal["kind"] == "extend_budget":
            extra = Decimal(proposal["action"]["extra_budget_usd"])
            self.s["budget"] = money(Decimal(self.s["budget"]) + extra)
            proposal["status"] = "executed"
            self.proposal_changed(proposal, "proposal.executed")
            self.schedule_budget()
        else:
            self.schedule(EXECUTE_DELAY_S, "execute", proposal_id=proposal_id)
        self.touch()
        return decided

    def cancel(self, reason: str | None, now: datetime) -> None:
        """Start cancelling (idempotent while cancelling); the run ends CANCEL_S later."""
        self.now = now
        self.t = float(self.s["clock"])
        if self.state == "cancelling" or self.done:
            return
        self.stop_training()
        self.set_state("cancelling", reason or "cancel requested")
        self.schedule(CANCEL_S, "cancel_finish", reason=reason)
        self.touch()

    def inject(self, kind: str, params: JsonDict, now: datetime) -> None:
        """Queue a simulator fault; training faults fire at the next training quantum."""
        self.now = now
        self.t = float(self.s["clock"])
        incident: JsonDict = {"kind": kind, "stage": None, "frac": 0.0}
        if kind == "node_failure":
            incident.update(
                detect_s=float(params.get("detect_s", 120.0)),
                resume_s=float(params.get("resume_s", 480.0)),
                node=params.get("node"),
                watch=float(params["watch"]) if params.get("watch") else None,
            )
        elif kind == "loss_spike":
            incident.update(
                z=float(params.get("z", 15.0)), escalate=bool(params.get("escalate", False))
            )
        elif kind == "slow_checkpoint":
            incident.update(factor=float(params.get("factor", 6.0)))
        elif kind == "gate_fail":
            stage = params.get("stage") or self.run.get("current_stage")
            if stage not in {s.value for s in TRAINING_STAGES} | {"ladder"}:
                stage = "pretrain"
            self.s["fail_gates"].append(str(stage))
            return
        self.s["incidents"].append(incident)
