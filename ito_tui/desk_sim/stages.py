"""The pipeline's stage walk: run start, data prep, ladder, plan, and the eval gates."""

from __future__ import annotations

from .catalog import gate_battery
from .core import EngineBase, JsonDict, iso
from .physics import gate_value, normal, uniform

PREFLIGHT_S = 90.0
GATE_S_PER_BENCHMARK = 900.0


class StageFlow(EngineBase):
    """Walks the stages of API.md in order; training stages advance in fixed quanta."""

    # ------------------------------------------------------------ run start and stage walk

    def on_start(self, _args: JsonDict) -> None:
        self.set_state("preflight", "pre-flight checks on the booked nodes")
        self.badput("preflight", PREFLIGHT_S)
        self.schedule(PREFLIGHT_S, "preflight_done")

    def on_preflight_done(self, _args: JsonDict) -> None:
        self.set_state("running", "pre-flight passed")
        self.next_stage()

    def next_stage(self) -> None:
        """Start the next stage, emitting `stage.skipped` for stages the spec leaves out."""
        pipeline: list[JsonDict] = self.s["pipeline"]
        while True:
            self.s["stage_idx"] += 1
            idx = int(self.s["stage_idx"])
            if idx >= len(pipeline):
                self.finish_completed()
                return
            entry = pipeline[idx]
            if entry["skip"]:
                self.stage(entry["name"])["state"] = "skipped"
                # The snapshot keeps the reason too, for clients that attach later.
                self.stage(entry["name"]).setdefault("summary", {})["reason"] = entry["skip"]
                self.emit(
                    "stage.skipped",
                    {"stage": entry["name"], "reason": entry["skip"]},
                    stage=entry["name"],
                )
                continue
            self.begin_stage(entry)
            return

    def begin_stage(self, entry: JsonDict) -> None:
        name = entry["name"]
        stage = self.stage(name)
        stage["state"] = "running"
        stage["started_at"] = self.sim_iso()
        self.run["current_stage"] = name
        if entry["kind"] == "train":
            self.begin_training(entry)
            return
        self.emit("stage.started", {"stage": name}, stage=name)
        duration = float(entry["duration_s"])
        if name == "data_prep":
            for frac, kind in ((0.35, "dp_manifest"), (0.7, "dp_dedup"), (0.95, "dp_decontam")):
                self.schedule(duration * frac, kind)
            self.schedule(duration, "stage_done", stage=name)
        elif name == "ladder":
            for i in range(1, 5):
                self.schedule(duration * i / 5, "ladder_progress", i=i)
            self.schedule(duration, "ladder_done")
        else:
            self.schedule(duration * 0.5, "plan_selected")
            self.schedule(duration, "stage_done", stage=name)

    def sim_iso(self) -> str:
        return iso(self.sim_time())

    # ------------------------------------------------------------ data prep, ladder, plan

    def on_dp_manifest(self, _args: JsonDict) -> None:
        tokens = int(self.s["pipeline"][self.pipeline_index("pretrain")]["tokens"] * 1.12)
        docs = tokens // 1180
        sources = {"web": int(docs * 0.71), "code": int(docs * 0.14), "papers": int(docs * 0.06)}
        sources["books"] = docs - sum(sources.values())
        data = {
            "documents": docs,
            "tokens": tokens,
            "shards": max(1, docs // 250_000),
            "sources": sources,
        }
        self.stage("data_prep")["summary"]["manifest"] = data
        self.emit("data.manifest_ready", data)

    def on_dp_dedup(self, _args: JsonDict) -> None:
        before = int(self.stage("data_prep")["summary"]["manifest"]["documents"])
        removed = 0.09 + 0.05 * uniform(self.seed, "dedup")
        data = {
            "documents_before": before,
            "documents_after": int(before * (1 - removed)),
            "removed_frac": round(removed, 4),
            "method": "minhash-lsh (5-gram, 0.8 jaccard)",
        }
        self.stage("data_prep")["summary"]["dedup"] = data
        self.emit("data.dedup_completed", data)

    def on_dp_decontam(self, _args: JsonDict) -> None:
        benches = ("mmlu", "gsm8k", "humaneval", "arc_challenge", "hellaswag", "ifeval")
        per = {b: int(3 + 400 * uniform(self.seed, "decontam", b) ** 3) for b in benches}
        data = {"per_benchmark": per, "removed_documents": sum(per.values())}
        self.stage("data_prep")["summary"]["decontam"] = data
        self.emit("data.decontam_completed", data)

    def on_ladder_progress(self, args: JsonDict) -> None:
        frac = int(args["i"]) / 5
        entry = self.s["pipeline"][self.pipeline_index("ladder")]
        progress = {
            "step": int(4000 * frac),
            "total_steps": 4000,
            "tokens": int(3e9 * frac),
            "total_tokens": int(3e9),
            "frac": frac,
            "eta_s": round(float(entry["duration_s"]) * (1 - frac), 1),
        }
        self.stage("ladder")["progress"] = progress
        self.emit("stage.progress", {"stage": "ladder", "progress": progress})

    def on_ladder_done(self, _args: JsonDict) -> None:
        ref = 3.21
        cand = round(3.19 + 0.006 * normal(self.seed, "ladder"), 4)
        data = {
            "decision": "proceed",
            "ladder_model": "150M",
            "reference_loss": ref,
            "candidate_loss": cand,
            "detail": "150M proxy on the custom mix is within 0.03 nats of the curated mix",
        }
        self.stage("ladder")["summary"]["ladder"] = data
        self.emit("ladder.completed", data)
        self.begin_gate("ladder")

    def on_plan_selected(self, _args: JsonDict) -> None:
        plan = self.run.get("plan")
        if plan is not None:
            self.emit("plan.selected", {"plan": plan})
        for warning in (self.run.get("estimate") or {}).get("warnings", []):
            self.emit("plan.warning", {"code": warning["code"], "message": warning["message"]})

    def on_stage_done(self, args: JsonDict) -> None:
        self.complete_stage(str(args["stage"]))

    def complete_stage(self, name: str) -> None:
        stage = self.stage(name)
        train = self.s.get("train")
        if train and train["stage"] == name:
            stage["summary"].update(
                steps=int(train["step"]),
                tokens=int(train["tokens"]),
                final_loss=self.s.get("last_loss"),
            )
        stage["state"] = "passed"
        stage["ended_at"] = self.sim_iso()
        self.emit("stage.completed", {"stage": name, "summary": stage["summary"]}, stage=name)
        self.next_stage()

    def pipeline_index(self, name: str) -> int:
        return [e["name"] for e in self.s["pipeline"]].index(name)

    # ------------------------------------------------------------ gates

    def begin_gate(self, name: str) -> None:
        specs = gate_battery(
            name,
            str(self.run["spec"]["target_capability"]),
            model_size=str(self.run["spec"]["model_size"]),
        )
        if not specs:
            self.complete_stage(name)
            return
        gate = {
            "gate_id": f"gate_{self.run['run_id'][4:]}_{name}",
            "stage": name,
            "battery_id": specs[0].battery_id,
            "status": "running",
            "results": [],
        }
        stage = self.stage(name)
        stage["state"] = "gate_eval"
        stage["gate"] = gate
        self.set_state("gate_eval", f"{name} eval gate")
        self.emit("gate.started", {"gate": gate}, stage=name)
        for i in range(len(specs)):
            self.schedule(GATE_S_PER_BENCHMARK * (i + 1), "gate_result", stage=name, i=i)
        self.badput("gate_eval", GATE_S_PER_BENCHMARK * len(specs))

    def on_gate_result(self, args: JsonDict) -> None:
        name, i = str(args["stage"]), int(args["i"])
        specs = gate_battery(
            name,
            str(self.run["spec"]["target_capability"]),
            model_size=str(self.run["spec"]["model_size"]),
        )
        spec = specs[i]
        gate = self.stage(name)["gate"]
        # An injected or scripted gate failure fails the first result reported after it.
        fail = name in self.s["fail_gates"] and all(r["passed"] for r in gate["results"])
        value = gate_value(
            self.seed,
            f"gate-{name}-{spec.benchmark}",
            spec.expected_value,
            spec.expected_stderr,
            spec.comparator.value,
            spec.threshold,
            fail=fail,
        )
        result = spec.result(value).model_dump(mode="json")
        gate["results"].append(result)
        self.emit("gate.result", {"gate_id": gate["gate_id"], "result": result}, stage=name)
        if i == len(specs) - 1:
            self.end_gate(name)

    def end_gate(self, name: str) -> None:
        stage = self.stage(name)
        gate = stage["gate"]
        failed = [r for r in gate["results"] if not r["passed"]]
        gate["status"] = "failed" if failed else "passed"
        if failed:
            self.emit("gate.failed", {"gate": gate}, stage=name)
            stage["state"] = "failed"
            stage["ended_at"] = self.sim_iso()
            benches = ", ".join(
                f"{r['benchmark']} {r['value']} (needs {r['comparator']} {r['threshold']})"
                for r in failed
            )
            detail = f"{name} gate failed: {benches}"
            self.emit(
                "stage.failed",
                {"stage": name, "reason": detail, "gate_id": gate["gate_id"]},
                stage=name,
            )
            self.finish_failed("gate_failed", detail, gate_id=gate["gate_id"])
            return
        self.emit("gate.passed", {"gate": gate}, stage=name)
        self.set_state("running", f"{name} gate passed")
        self.complete_stage(name)

    # Implemented further down the mixin chain (training.py, outcomes.py).
    def begin_training(self, entry: JsonDict) -> None:
        raise NotImplementedError

    def finish_completed(self) -> None:
        raise NotImplementedError

    def finish_failed(self, kind: str, detail: str, *, gate_id: str | None = None) -> None:
        raise NotImplementedError
