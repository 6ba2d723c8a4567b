"""`GET /v1/runs/{id}/fleet` against the run's event stream (API.md v1.1, `runs.fleet`)."""

from __future__ import annotations

import time
from typing import Any

import httpx

from ito_tui.contract import Fleet
from tests.support.servers import SimHandle

from .fleet_story import Story, story_at
from .helpers import create_run, key, read_events, spec, wait_for

CHAIN = (
    "node.failed",
    "quorum.changed",
    "fault.detected",
    "node.replaced",
    "quorum.changed",
    "fault.recovered",
)


def fleet_of(client: httpx.Client, run_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/runs/{run_id}/fleet")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    Fleet.model_validate(body)
    return body


def test_the_fleet_agrees_with_the_event_stream_through_a_node_failure(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory(speed=3000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        first = fleet_of(client, rid)
        assert [n["hostname"] for n in first["nodes"]] == [
            f"h100-4n-ib-{i:02d}" for i in range(1, 5)
        ]
        assert all(len(n["gpus"]) == 8 for n in first["nodes"])
        assert first["quorum"]["participants"] == len(first["replicas"]) == 4
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        # 3 s of wall time from the failure to the recovery at 3000x.
        accepted = client.post(
            f"/v1/sim/runs/{rid}/inject",
            json={"kind": "node_failure", "params": {"detect_s": 3000, "resume_s": 6000}},
        )
        assert accepted.status_code == 202
        snaps: list[dict[str, Any]] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            snaps.append(fleet_of(client, rid))
            run = client.get(f"/v1/runs/{rid}").json()
            if run["faults"] and run["faults"][0]["recovered"]:
                break
            time.sleep(0.03)
        snaps.append(fleet_of(client, rid))
        client.post(f"/v1/runs/{rid}/cancel", headers=key())
        _, messages = read_events(client, rid)
    envelopes = [m.envelope for m in messages]
    chain = [e for e in envelopes if e["type"] in CHAIN]
    assert tuple(e["type"] for e in chain) == CHAIN
    failed, shrink, detected, replaced, grow, recovered = (e["data"] for e in chain)
    host = failed["hostname"]
    assert detected["node"] == recovered["node"] == replaced["hostname"] == host
    assert failed["fault_id"] == detected["fault_id"] == replaced["fault_id"]
    assert "Xid" in failed["reason"]
    assert (shrink["participants"], grow["participants"]) == (3, 4)
    assert grow["quorum_id"] == shrink["quorum_id"] + 1 == 3
    assert replaced["replaced_by"] == "h100-4n-ib-05"
    for snap in snaps:
        story = story_at(first, envelopes, snap["last_event_seq"])
        assert story.mismatches(snap) == [], snap["last_event_seq"]
    # The polls saw the chain's phases, not only its ends.
    phases = {_phase(s, host) for s in snaps}
    assert {"failed", "spare healing", "recovered"} <= phases, phases
    spare = next(n for n in snaps[-1]["nodes"] if n["hostname"] == "h100-4n-ib-05")
    gone = next(n for n in snaps[-1]["nodes"] if n["hostname"] == host)
    assert spare["replica_id"] == gone["replica_id"] and spare["state"] == "healthy"
    assert gone["state"] == "replaced" and sum(g["xid_errors"] for g in gone["gpus"]) == 1
    assert sum(n["nccl_timeouts"] for n in snaps[-1]["nodes"]) == 1


def _phase(snap: dict[str, Any], host: str) -> str:
    node = next(n for n in snap["nodes"] if n["hostname"] == host)
    states = {r["state"] for r in snap["replicas"]}
    if node["state"] == "failed":
        return "failed"
    if node["state"] == "replaced":
        return "spare healing" if "recovering" in states else "recovered"
    return "before"


def test_a_failed_nodes_gpus_have_no_counters_and_the_replica_heartbeat_ages(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory(speed=3000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        client.post(
            f"/v1/sim/runs/{rid}/inject",
            json={
                "kind": "node_failure",
                "params": {"detect_s": 6000, "resume_s": 6000, "node": "h100-4n-ib-03.fra1.x"},
            },
        )
        deadline = time.monotonic() + 20
        while True:
            snap = fleet_of(client, rid)
            node = next(n for n in snap["nodes"] if n["hostname"] == "h100-4n-ib-03")
            if node["state"] == "failed" or time.monotonic() > deadline:
                break
            time.sleep(0.03)
        time.sleep(0.3)
        later = fleet_of(client, rid)
        client.post(f"/v1/runs/{rid}/cancel", headers=key())
    assert node["state"] == "failed" and node["step_time_s_p50"] is None
    assert all(g["util_frac"] is None and g["temp_c"] is None for g in node["gpus"])
    lost = [r for r in later["replicas"] if r["state"] == "lost"]
    assert [r["replica_id"] for r in lost] == [node["replica_id"]]
    assert lost[0]["nodes"] == []
    # The lost replica's last heartbeat recedes on the simulated clock; the others' are fresh.
    assert lost[0]["heartbeat_age_s"] > 300
    assert all(r["heartbeat_age_s"] < 5 for r in later["replicas"] if r["state"] != "lost")


def test_a_straggler_is_hotter_slower_and_flagged_in_the_fleet(sim_factory: Any) -> None:
    # 50,000x: the straggler is flagged for about 2 s of wall time.
    handle: SimHandle = sim_factory(speed=50_000.0, scenario="straggler")
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        first = fleet_of(client, rid)
        deadline = time.monotonic() + 30
        while True:
            snap = fleet_of(client, rid)
            if any(n["straggler"] for n in snap["nodes"]) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        client.post(f"/v1/runs/{rid}/cancel", headers=key())
        _, messages = read_events(client, rid)
    envelopes = [m.envelope for m in messages]
    assert Story.start(first).mismatches(first) == []
    assert story_at(first, envelopes, snap["last_event_seq"]).mismatches(snap) == []
    slow = next(n for n in snap["nodes"] if n["straggler"])
    others = [n for n in snap["nodes"] if not n["straggler"]]
    assert slow["state"] == "degraded"
    assert all(slow["step_time_s_p50"] >= 1.3 * n["step_time_s_p50"] for n in others)
    hottest = max(g["temp_c"] for g in slow["gpus"])
    assert all(hottest > max(g["temp_c"] for g in n["gpus"]) for n in others)
    assert min(g["util_frac"] for g in slow["gpus"]) < min(
        g["util_frac"] for n in others for g in n["gpus"]
    )


def test_fleet_of_an_unknown_run_is_404_and_a_scaffold_backend_names_the_capability(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory()
    scaffold: SimHandle = sim_factory(mode="scaffold")
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        missing = client.get("/v1/runs/run_nope/fleet")
        caps = client.get("/v1/capabilities").json()["capabilities"]
    assert missing.status_code == 404 and missing.json()["code"] == "run.not_found"
    assert any(c["name"] == "runs.fleet" and c["status"] == "available" for c in caps)
    with httpx.Client(base_url=scaffold.url, headers=scaffold.headers(), timeout=10) as client:
        answer = client.get("/v1/runs/run_nope/fleet")
        caps = client.get("/v1/capabilities").json()["capabilities"]
    assert answer.status_code == 501 and answer.json()["capability"] == "runs.fleet"
    assert any(c["name"] == "runs.fleet" and c["status"] == "not_implemented" for c in caps)


def test_a_finished_runs_fleet_is_the_one_it_ended_with(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(scenario="node-failure")
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client, spec(sim={"seed": 2}))["run_id"]
        _, messages = read_events(client, rid)
        snap = fleet_of(client, rid)
    envelopes = [m.envelope for m in messages]
    first = {
        "nodes": [
            {
                "hostname": f"h100-4n-ib-{i:02d}",
                "state": "healthy",
                "replica_id": f"replica_{i - 1}",
            }
            for i in range(1, 5)
        ],
        "replicas": [{"replica_id": f"replica_{i}"} for i in range(4)],
    }
    assert snap["last_event_seq"] == envelopes[-1]["seq"]
    assert story_at(first, envelopes, snap["last_event_seq"]).mismatches(snap) == []
    assert sum(n["state"] == "replaced" for n in snap["nodes"]) == 3
    assert [n["hostname"] for n in snap["nodes"][4:]] == [
        f"h100-4n-ib-{i:02d}" for i in range(5, 8)
    ]
