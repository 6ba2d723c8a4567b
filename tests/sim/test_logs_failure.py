"""A node failure in the job log: the whole chain, in order, on the right node and ranks, at
the times of the events it hangs on; the same run (seed) writes the same log."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import httpx

from ito_tui.contract import LogLine
from tests.support.servers import SimHandle

from .helpers import create_run, key, read_events, wait_for
from .logs_support import whole_log


def _events(client: httpx.Client, rid: str) -> list[dict[str, Any]]:
    _, messages = read_events(client, rid)
    return [json.loads(m.data) for m in messages]


def test_each_node_failure_writes_the_whole_chain_in_order(sim_factory: Any) -> None:
    sim: SimHandle = sim_factory(scenario="node-failure", seed=5)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        wait_for(client, rid, lambda r: r["state"] == "completed", timeout=30)
        lines = whole_log(client, rid)
        events = _events(client, rid)
        booking = client.get(f"/v1/bookings/{run['booking_id']}").json()
    slot = {n["hostname"].split(".")[0]: i for i, n in enumerate(booking["nodes"])}
    for e in events:  # a spare takes the slot (and the ranks) of the node it replaces
        if e["type"] == "node.replaced":
            slot[e["data"]["replaced_by"]] = slot[e["data"]["hostname"]]
    failed = [e for e in events if e["type"] == "node.failed"]
    assert len(failed) == 3
    for event in failed:
        _check_chain(lines, events, event, slot)
    quorum = [x.text for x in lines if x.text.startswith("Lighthouse: Quorum!")]
    changes = [e["data"] for e in events if e["type"] == "quorum.changed"]
    assert quorum == [
        f"Lighthouse: Quorum! quorum_id={q['quorum_id']} participants={q['participants']} "
        f"min_replicas={q['min_replicas']}"
        for q in changes
    ]


def _check_chain(
    lines: list[LogLine], events: list[dict[str, Any]], event: dict[str, Any],
    slot: dict[str, int],
) -> None:  # fmt: skip
    """One failure's lines: Xid, replica lost, NCCL watchdogs, traceback, the controller,
    the spare joining, healing, resuming; each where and when it belongs."""
    host, fault_id = event["data"]["hostname"], event["data"]["fault_id"]
    of_fault = {e["type"]: e for e in events if e["data"].get("fault_id") == fault_id}
    detected, replaced = of_fault["fault.detected"], of_fault["node.replaced"]
    spare = replaced["data"]["replaced_by"]
    ranks = set(range(8 * slot[host], 8 * slot[host] + 8))

    def first(after: int, source: str | None, needle: str) -> int:
        return next(i for i, x in enumerate(lines)
                    if i > after and source in (None, x.source) and needle in x.text)  # fmt: skip

    xid = first(-1, "system", f"{host} kernel: NVRM: Xid")
    lost = first(xid, "torchft", "replica lost")
    nccl = first(lost, "nccl", "Watchdog caught collective operation timeout")
    trace = first(nccl, "trainer", "Traceback (most recent call last)")
    ctl = first(trace, "system", f"controller: fault {fault_id} on {host}")
    joins = first(ctl, "system", f"admitted as spare replacing {host}")
    heal = first(joins, "torchft", "healing required")
    resumes = first(heal, "trainer", "Training resumes at step")
    assert xid < lost < nccl < trace < ctl < joins < heal < resumes
    assert lines[xid].level == "error" and lines[xid].sim_ts == _ts(event["sim_ts"])
    watchdogs = lines[nccl:trace]
    assert all(w.source == "nccl" and w.level == "error" for w in watchdogs)
    # At the fault's detection: Enter on the fault in the timeline lands on them.
    assert {w.sim_ts for w in watchdogs} == {_ts(detected["sim_ts"])}
    others = [w for w in watchdogs if w.rank not in ranks]
    assert len(others) == 1 and others[0].node != host
    assert ranks <= {w.rank for w in watchdogs}
    for w in watchdogs:
        assert w.text.startswith(f"[rank{w.rank}]:[E") and f"[Rank {w.rank}]" in w.text
    tb = lines[trace:ctl]
    assert len({x.rank for x in tb}) == 1
    # The rank that dies is the one on the GPU the fleet counts the Xid on.
    gpu = re.search(r"on GPU (\d+)", event["data"]["reason"])
    assert gpu is not None and tb[0].rank == 8 * slot[host] + int(gpu[1])
    assert [x.level for x in tb] == ["error"] * (len(tb) - 2) + ["critical"] * 2
    assert all(x.text.startswith(f"[rank{tb[0].rank}]: ") for x in tb[:-1])
    assert lines[joins].node == spare and lines[heal].node == spare
    assert lines[joins].sim_ts == _ts(replaced["sim_ts"])
    resumed_from = of_fault["fault.recovered"]["data"]["resumed_from_step"]
    assert lines[resumes].text == f"Training resumes at step {resumed_from + 1}"


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


_CLOCKS = re.compile(r"\[[EDIW]\d{4} \d\d:\d\d:\d\d\.\d+ ")
_IDS = re.compile(r"\b(flt|run|ckpt|gate|prop)_[0-9a-f]+")


def _shape(client: httpx.Client, rid: str) -> list[tuple[Any, ...]]:
    """A run's log without its clocks (the sim clock starts at the wall-clock creation) and
    ids (random per run)."""
    return [
        (
            x.seq,
            x.rank,
            x.node,
            x.replica_id,
            x.level,
            x.source,
            _IDS.sub(r"\1_", _CLOCKS.sub("[T ", x.text)),
        )
        for x in whole_log(client, rid)
    ]


def test_the_same_seed_writes_the_same_log(sim_factory: Any) -> None:
    shapes = []
    for _ in range(2):
        sim = sim_factory(scenario="showcase", seed=11, approval_speed=None)
        with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
            rid = create_run(client)["run_id"]
            wait_for(client, rid, lambda r: r["state"] in ("completed", "failed"), timeout=30)
            shapes.append(_shape(client, rid))
    assert len(shapes[0]) > 500
    assert shapes[0] == shapes[1]


def test_a_hang_is_silent_in_the_log_until_every_ranks_watchdog_fires(sim_factory: Any) -> None:
    sim: SimHandle = sim_factory(scenario="hang", seed=2)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        run = create_run(client)
        rid = run["run_id"]
        wait_for(client, rid, lambda r: r["state"] == "completed", timeout=30)
        lines = whole_log(client, rid)
        events = _events(client, rid)
    detected = next(e for e in events if e["type"] == "fault.detected")
    assert detected["data"]["kind"] == "hang"
    at = _ts(detected["sim_ts"])
    stalled = max(_ts(e["sim_ts"]) for e in events
                  if e["type"] == "telemetry" and _ts(e["sim_ts"]) < at)  # fmt: skip
    # Silence (API.md): no line at all while every rank sits in the collective ...
    assert [x for x in lines if x.sim_ts is not None and stalled < x.sim_ts < at] == []
    # ... until the watchdogs fire on every rank at the detection.
    watchdogs = [x for x in lines if x.sim_ts == at and x.source == "nccl"]
    ranks = sorted(-1 if x.rank is None else x.rank for x in watchdogs)
    assert ranks == list(range(run["plan"]["world_size"]))
    assert any(x.sim_ts == at and "(hang) detected after 720s" in x.text for x in lines)
    assert lines[-1].text.startswith("torchrun: job completed")


def test_a_failed_gate_shows_its_failing_benchmark_as_an_error_at_its_time(
    sim_factory: Any,
) -> None:
    sim: SimHandle = sim_factory(scenario="gate-fail")
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["state"] == "failed", timeout=30)
        lines = whole_log(client, rid)
        events = _events(client, rid)
    failing = [
        e for e in events if e["type"] == "gate.result" and not e["data"]["result"]["passed"]
    ]
    assert failing
    for event in failing:
        result = event["data"]["result"]
        row = [x for x in lines if x.text.startswith(f"eval: |{result['benchmark']}|")
               and x.sim_ts == _ts(event["sim_ts"])]  # fmt: skip
        assert len(row) == 1 and row[0].level == "error" and row[0].text.endswith(": FAIL")
    verdict = next(e for e in events if e["type"] == "gate.failed")["data"]["gate"]["gate_id"]
    assert [x.text for x in lines[-2:]] == [
        f"eval: gate {verdict} FAILED: the run stops here",
        "torchrun: job failed",
    ]


def test_a_loss_spike_and_the_approved_rollback_appear_as_the_trainer_carries_it_out(
    sim_factory: Any,
) -> None:
    sim: SimHandle = sim_factory(scenario="showcase", seed=3)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        paused = wait_for(client, rid, lambda r: r["state"] == "awaiting_approval")
        proposal = paused["pending_proposal_ids"][0]
        assert client.post(f"/v1/proposals/{proposal}/approve", headers=key()).status_code == 200
        wait_for(client, rid, lambda r: r["state"] == "completed", timeout=30)
        lines = whole_log(client, rid)
        events = _events(client, rid)
    spikes = [e["data"] for e in events if e["type"] == "loss.spike_detected"]
    warned = [x.text for x in lines if x.text.startswith("controller: loss spike at step")]
    assert len(warned) == len(spikes) == 2
    assert warned[0].endswith("batch skipped") and warned[1].endswith("waits for a person")
    assert f"step {spikes[1]['step']}: loss {spikes[1]['loss']:.4f} z=14.8" in warned[1]
    executed = next(e for e in events if e["type"] == "proposal.executed")
    action = executed["data"]["proposal"]["action"]
    texts = [x.text for x in lines if x.sim_ts == _ts(executed["sim_ts"])]
    to = action["rollback_to_step"]
    assert texts[-3:] == [
        f"Loading the checkpoint at step {to}.",
        f"dataloader: skipping the next {action['skip_batches']:,} batches",
        f"Training resumes at step {to + 1}",
    ]
