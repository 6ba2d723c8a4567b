"""Training stages: fixed simulated-time quanta with telemetry, progress and incidents."""

from __future__ import annotations

import math
from typing import Any

from . import fleet
from .core import JsonDict, iso
from .physics import learning_rate, normal, open_metrics, rl_stats, stage_loss, uniform
from .stages import StageFlow

PROGRESS_EVERY = 1
"""A stage.progress event every this many training quanta (telemetry every quantum). Every
one, as a trainer logs its step with its metrics: at 4, a demo's stage list read a step
behind the checkpoint its Ckpts tab and event log had just shown (checkpoints come every one
or two quanta), and its spend moved four times for each step it showed."""
HANG_CADENCE_S = 180.0
"""The longest quantum (simulated seconds) of a stage that holds a `hang` incident."""


class TrainingFlow(StageFlow):
    """Advances a training stage quantum by quantum; incidents come from the subclasses."""

    def begin_training(self, entry: JsonDict) -> None:
        name = entry["name"]
        duration = float(entry["duration_s"])
        n_quanta = max(4, min(120, math.ceil(duration / 30.0)))
        ckpt_every = max(1, min(2, n_quanta // 8))
        if any(
            i["kind"] == "hang" and i["stage"] in (name, None) and not i.get("done")
            for i in self.s["incidents"]
        ):
            # A stage that will hang reports as often as a real trainer (at most every
            # HANG_CADENCE_S): a client flags silence after 3 usual gaps and stall_after_s
            # (600 s), so it must be able to before the backend's own detection at 720 s.
            # Checkpoints keep their simulated interval.
            fine = max(n_quanta, math.ceil(duration / HANG_CADENCE_S))
            ckpt_every = max(1, round(ckpt_every * fine / n_quanta))
            n_quanta = fine
        total_steps = max(n_quanta, int(entry["tokens"]) // max(1, int(self.s["batch_tokens"])))
        self.s["train"] = {
            "stage": name,
            "q": duration / n_quanta,
            "n_quanta": n_quanta,
            "qi": 0,
            "step": 0.0,
            "total_steps": total_steps,
            "tokens": int(entry["tokens"]),
            "ckpt_every": ckpt_every,
            "throughput": float(self.s["squeeze"]),
        }
        self.emit(
            "stage.started",
            {"stage": name, "total_steps": total_steps, "total_tokens": int(entry["tokens"])},
            stage=name,
        )
        self.arm_quantum()

    def arm_quantum(self, delay: float | None = None) -> None:
        """Schedule the next training quantum of the current generation."""
        train = self.s["train"]
        self.schedule(train["q"] if delay is None else delay, "quantum", gen=self.s["gen"])

    def stop_training(self) -> None:
        """Invalidate queued quanta (a fault, a pause or a cancel)."""
        self.s["gen"] += 1

    def on_quantum(self, args: JsonDict) -> None:
        if args["gen"] != self.s["gen"] or self.state != "running":
            return
        train = self.s["train"]
        train["qi"] += 1
        pace = self.fleet_pace()
        per_q = train["total_steps"] / train["n_quanta"] * train["throughput"] * pace
        train["step"] = min(float(train["total_steps"]), train["step"] + per_q)
        self.s["productive_s"] += train["q"]
        self.fleet_quantum()
        incident = self.pick_incident(train)
        if incident is not None and incident["kind"] in ("node_failure", "hang"):
            self.node_failure(incident)
            return
        finished = train["step"] >= train["total_steps"]
        if train["qi"] % train["ckpt_every"] == 0 and not finished:
            self.save_checkpoint()
        spike = incident is not None and incident["kind"] == "loss_spike"
        self.telemetry(spike_z=float(incident["z"]) if incident and spike else None)
        if train["qi"] % PROGRESS_EVERY == 0 or finished:
            self.progress()
        if incident is not None and self.handle_incident(incident) == "pause":
            return
        if finished:
            self.save_checkpoint()
            self.begin_gate(train["stage"])
            return
        self.arm_quantum()

    # Implemented by the incident mixin (incidents.py).
    def pick_incident(self, train: JsonDict) -> JsonDict | None:
        raise NotImplementedError

    def handle_incident(self, incident: JsonDict) -> str | None:
        raise NotImplementedError

    def node_failure(self, incident: JsonDict) -> None:
        raise NotImplementedError

    def save_checkpoint(self) -> None:
        raise NotImplementedError

    # Implemented by the fleet mixin (fleet_flow.py).
    def fleet_pace(self) -> float:
        raise NotImplementedError

    def fleet_quantum(self) -> None:
        raise NotImplementedError

    def progress_json(self) -> JsonDict:
        train = self.s["train"]
        frac = min(1.0, train["step"] / train["total_steps"])
        remaining_q = (train["total_steps"] - train["step"]) / max(
            1e-9, train["total_steps"] / train["n_quanta"] * train["throughput"]
        )
        return {
            "step": int(train["step"]),
            "total_steps": train["total_steps"],
            "tokens": int(train["tokens"] * frac),
            "total_tokens": train["tokens"],
            "frac": round(frac, 4),
            "eta_s": round(remaining_q * train["q"], 1),
        }

    def progress(self) -> None:
        name = self.s["train"]["stage"]
        progress = self.progress_json()
        self.stage(name)["progress"] = progress
        self.emit("stage.progress", {"stage": name, "progress": progress})

    def telemetry(self, *, spike_z: float | None = None) -> None:
        """One TelemetrySample for the current quantum."""
        train = self.s["train"]
        name, qi = train["stage"], train["qi"]
        frac = min(1.0, train["step"] / train["total_steps"])
        params = float(self.s["params"])
        tokens_seen = int(self.s["tokens_before"].get(name, 0) + train["tokens"] * frac)
        noise = normal(self.seed, "loss", name, qi)
        loss = stage_loss(name, params, tokens_seen, frac) * (1 + 0.004 * noise)
        z = round(noise, 3)
        if spike_z is not None:
            loss *= 1 + 0.012 * spike_z
            z = spike_z
        plan: JsonDict = self.run.get("plan") or {}
        factor = {"sft": 0.92, "dpo": 0.6, "rlvr": 0.35}.get(name, 1.0) * train["throughput"]
        factor *= self.fleet_pace()
        tps = float(plan.get("est_tokens_per_s_per_gpu", 5000.0)) * factor
        tps *= 1 + 0.015 * normal(self.seed, "tps", name, qi)
        mfu = plan.get("est_mfu_frac")
        self.s["program_frac"] = min(1.0, 0.975 * train["throughput"])
        gpu_h = max(self.t * int(self.s["gpus"]) / 3600, 1e-9)
        sample: dict[str, Any] = {
            "seq": int(self.s["seq"]) + 1,
            "ts": self.now_iso(),
            "stage": name,
            "step": int(train["step"]),
            "tokens_seen": tokens_seen,
            "loss": round(loss, 5),
            "loss_z": z,
            "grad_norm": round(0.28 + 0.03 * abs(noise) + (4.0 if spike_z else 0.0), 4),
            "lr": learning_rate(name, params, frac),
            "tokens_per_s_per_gpu": round(tps, 1),
            "mfu_frac": None if mfu is None else round(min(0.99, float(mfu) * factor), 4),
            "mem_max_reserved_gib": round(
                float(plan.get("est_mem_per_gpu_gib", 60.0))
                * (0.97 + 0.02 * uniform(self.seed, "mem", name, qi)),
                2,
            ),
            "goodput": self.goodput_json(),
            "interruptions_total": int(self.s["interruptions"]),
            "interruptions_per_1k_gpu_hours": round(1000 * int(self.s["interruptions"]) / gpu_h, 4),
            "checkpoint": self.checkpoint_stats(),
            "spend_usd": self.spend_json()["usd_spent"],
            "rl": rl_stats(self.seed, qi, frac) if name == "rlvr" else None,
        }
        sample["metrics"] = open_metrics(
            self.seed,
            name,
            qi,
            sample=sample,
            params=params,
            mem_total_gib=float(fleet.ensure(self.s)["mem_total_gib"]),
            step_time_s=self.step_time() / self.fleet_pace(),
            spike_z=spike_z,
        )
        self.s["last_loss"] = sample["loss"]
        self.emit("telemetry", sample)
        idx = int(self.s["tel_idx"])
        self.s["tel_idx"] = idx + 1
        event = self.out[-1]
        body = getattr(event, "data").model_dump_json()  # noqa: B009 - typed per event class
        self.out_telemetry.append((idx, event.seq, float(sample["loss"]), body))

    def checkpoint_stats(self) -> JsonDict:
        last = self.s.get("ckpt_last")
        if not last:
            return {}
        stats = dict(last)
        stats["age_s"] = round(self.t - float(stats.pop("t")), 1)
        return stats

    def now_iso(self) -> str:
        return iso(self.now)

    def step_time(self) -> float:
        train = self.s["train"]
        return float(train["q"]) / max(1e-9, float(train["total_steps"] / train["n_quanta"]))
