"""Cancelling runs and injecting simulator faults (node failure, spike, gate, checkpoint)."""

from __future__ import annotations

from typing import Any

import httpx

from ito_tui.contract import parse_event
from tests.support.servers import SimHandle

from .helpers import create_run, key, read_events, spec, wait_for


def inject(client: httpx.Client, run_id: str, kind: str, **params: Any) -> httpx.Response:
    return client.post(f"/v1/sim/runs/{run_id}/inject", json={"kind": kind, "params": params})


def test_cancel_passes_through_cancelling_and_ends_with_run_cancelled(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(speed=20_000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        response = client.post(f"/v1/runs/{rid}/cancel", headers=key())
        assert response.status_code == 202 and response.json()["state"] == "cancelling"
        _, events = read_events(client, rid)
        assert events[-1].event == "run.cancelled"
        assert "cancelling" in [e.envelope["data"].get("to_state") for e in events]
        done = client.get(f"/v1/runs/{rid}").json()
        assert done["state"] == "cancelled" and done["failure"]["kind"] == "cancelled"
        assert done["failure"]["detail"] == "cancelled by alice"
        stages = {s["name"]: s["state"] for s in done["stages"]}
        assert stages["pretrain"] == "cancelled" and stages["sft"] == "pending"
        again = client.post(f"/v1/runs/{rid}/cancel", headers=key())
        assert again.status_code == 409 and again.json()["code"] == "run.terminal"
        assert client.post("/v1/runs/run_nope/cancel", headers=key()).status_code == 404
        bad = client.post(f"/v1/runs/{rid}/cancel", json={"why": "x"}, headers=key())
        assert bad.status_code == 422 and bad.json()["code"] == "validation.failed"


def test_injected_node_failure_breaching_the_slo_is_reported(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(speed=1_000_000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        accepted = inject(client, rid, "node_failure", detect_s=700, resume_s=1000)
        assert accepted.status_code == 202 and accepted.json()["status"] == "scheduled"
        inject(client, rid, "slow_checkpoint", factor=10)
        _, events = read_events(client, rid)
        parsed = [parse_event(m.data) for m in events]
        types = [e.type for e in parsed]
        assert types.index("fault.detected") < types.index("fault.recovered")
        breaches = [getattr(e, "data") for e in parsed if e.type == "slo.breached"]  # noqa: B009
        assert [(b.slo, b.value_s, b.limit_s) for b in breaches] == [
            ("detect", 700, 600), ("resume", 1000, 900)
        ]  # fmt: skip
        run = client.get(f"/v1/runs/{rid}").json()
        assert run["faults"][0]["slo_breached"] == ["detect", "resume"]
        assert run["faults"][0]["recovered"] is True
        rates = [
            e.data.checkpoint.write_gb_per_s
            for e in parsed
            if e.type == "telemetry" and e.data.checkpoint.write_gb_per_s
        ]
        assert min(rates) < max(rates) / 5


def test_injected_gate_failure_fails_the_stage_and_the_run(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(speed=1_000_000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        assert inject(client, rid, "gate_fail").status_code == 202
        _, events = read_events(client, rid)
        parsed = [parse_event(m.data) for m in events]
        assert parsed[-1].type == "run.failed"
        failure = getattr(parsed[-1], "data").failure  # noqa: B009
        assert failure.kind == "gate_failed" and failure.gate_id
        run = client.get(f"/v1/runs/{rid}").json()
        stages = {s["name"]: s for s in run["stages"]}
        assert stages["pretrain"]["state"] == "failed"
        assert stages["pretrain"]["gate"]["status"] == "failed"
        assert stages["mid_train"]["state"] == "pending"
        assert "stage.started" not in [e.type for e in parsed if e.stage == "mid_train"]


def test_inject_errors(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        assert inject(client, "run_nope", "node_failure").status_code == 404
        rid = create_run(client, spec())["run_id"]
        bad_kind = inject(client, rid, "meteor")
        assert bad_kind.status_code == 422 and bad_kind.json()["errors"]
        bad_param = inject(client, rid, "loss_spike", z="huge")
        assert bad_param.status_code == 422
        wait_for(client, rid, lambda r: r["state"] == "completed")
        late = inject(client, rid, "loss_spike")
        assert late.status_code == 409 and late.json()["code"] == "run.terminal"


def test_a_run_whose_simulation_breaks_fails_visibly_and_the_desk_keeps_going(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory(speed=200_000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        broken = create_run(client)["run_id"]
        small = spec(booking_id="bk_h100_1n", model_size="150M", target_tokens=None)
        healthy = create_run(client, {**small, "budget_usd": "5000"})["run_id"]
        # A malformed incident (no timings) makes the engine raise at the next quantum.
        engine = handle.app.state.desk.engines[broken]
        engine.s["incidents"].append({"kind": "node_failure", "stage": None, "frac": 0.0})
        _, events = read_events(client, broken)
        last = parse_event(events[-1].data)
        assert last.type == "run.failed"
        assert getattr(last, "data").failure.kind == "fatal"  # noqa: B009
        assert wait_for(client, healthy, lambda r: r["state"] == "completed")


def test_a_spec_can_override_the_scenario_and_spikes_can_be_injected(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(approval_speed=None, proposal_ttl_s=600.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        failing = create_run(client, spec(sim={"scenario": "gate-fail", "seed": 1}))["run_id"]
        _, events = read_events(client, failing)
        last = parse_event(events[-1].data)
        assert last.type == "run.failed" and last.stage == "mid_train"
        small = spec(booking_id="bk_h100_1n", model_size="150M", target_tokens=None)
        # A per-run clock slow enough to catch its pretrain stage from the test.
        body = {**small, "budget_usd": "5000", "sim": {"time_scale": 5000}}
        rid = create_run(client, body)["run_id"]
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        assert inject(client, rid, "loss_spike", z=9, escalate=True).status_code == 202
        _, events = read_events(client, rid)
        parsed = [parse_event(m.data) for m in events]
        spikes = [getattr(e, "data") for e in parsed if e.type == "loss.spike_detected"]  # noqa: B009
        assert [(s.loss_z, s.action) for s in spikes] == [(9.0, "escalated")]
        types = [e.type for e in parsed]
        assert types.index("proposal.created") < types.index("proposal.expired")
        assert types[-1] == "run.completed"
