"""The fleet scenarios over HTTP: `straggler`, `hang`, and showcase's straggler that fails."""

from __future__ import annotations

import re
import time
from datetime import datetime
from itertools import pairwise
from statistics import median
from typing import Any

import httpx
import pytest

from ito_tui.desk_sim.config import DEMO_SPEED
from tests.support.servers import SimHandle

from .helpers import (
    SMALL_SPEC,
    Message,
    create_run,
    key,
    read_events,
    spec,
    sse_messages,
    wait_for,
)

PROGRESS = {"telemetry", "stage.progress", "checkpoint.saved"}
FLEET = {
    "node.degraded",
    "node.failed",
    "node.replaced",
    "node.recovered",
    "straggler.detected",
    "straggler.cleared",
    "quorum.changed",
}


def _sim(envelope: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(envelope["sim_ts"].replace("Z", "+00:00"))


def _run_all(handle: SimHandle, body: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client, body)["run_id"]
        _, messages = read_events(client, rid)
    return [m.envelope for m in messages]


def test_straggler_throttles_one_node_past_1_3x_then_it_recovers(sim_factory: Any) -> None:
    envelopes = _run_all(sim_factory(scenario="straggler"))
    fleet = [e for e in envelopes if e["type"] in FLEET]
    assert [e["type"] for e in fleet] == [
        "node.degraded",
        "straggler.detected",
        "straggler.cleared",
        "node.recovered",
    ]
    assert len({e["data"]["hostname"] for e in fleet}) == 1
    detected = fleet[1]["data"]
    assert detected["step_time_s"] >= 1.3 * detected["fleet_p50_s"]
    slot = int(detected["hostname"].rsplit("-", 1)[1]) - 1
    assert slot * 8 <= detected["rank"] < slot * 8 + 8
    assert fleet[2]["data"]["step_time_s"] < 1.3 * fleet[2]["data"]["fleet_p50_s"]
    assert "thermal" in fleet[0]["data"]["reason"]
    # Synchronous training runs at the straggler's pace: throughput drops while it lasts.
    seqs = [e["seq"] for e in fleet]
    tps = {
        "before": [
            e["data"]["tokens_per_s_per_gpu"]
            for e in envelopes
            if e["type"] == "telemetry" and e["stage"] == "pretrain" and e["seq"] < seqs[0]
        ],
        "during": [
            e["data"]["tokens_per_s_per_gpu"]
            for e in envelopes
            if e["type"] == "telemetry" and seqs[1] < e["seq"] < seqs[2]
        ],
    }
    assert tps["during"] and median(tps["during"]) < 0.8 * median(tps["before"])
    assert envelopes[-1]["type"] == "run.completed"


def test_showcase_shows_a_straggler_for_a_while_before_that_node_fails(sim_factory: Any) -> None:
    envelopes = _run_all(sim_factory(scenario="showcase", approval_speed=None))
    by_type = {e["type"]: e for e in reversed(envelopes) if e["type"] in FLEET}
    degraded, detected, failed = (
        by_type["node.degraded"],
        by_type["straggler.detected"],
        by_type["node.failed"],
    )
    host = failed["data"]["hostname"]
    assert degraded["data"]["hostname"] == detected["data"]["hostname"] == host
    assert degraded["seq"] < detected["seq"] < failed["seq"]
    # In `ito-tui demo` (DEMO_SPEED), the operator has well over half a minute of wall
    # time with the straggler on screen before the node fails.
    visible_s = (_sim(failed) - _sim(detected)).total_seconds() / DEMO_SPEED
    assert visible_s >= 40, visible_s
    between = [e for e in envelopes if detected["seq"] < e["seq"] < failed["seq"]]
    assert sum(e["type"] == "telemetry" for e in between) >= 15
    cleared = [e for e in envelopes if e["type"] == "straggler.cleared"]
    assert [e["seq"] for e in cleared] == [failed["seq"] + 1]
    assert envelopes[-1]["type"] == "run.completed"


def test_hang_stops_progress_with_heartbeats_flowing_until_the_backends_own_detection(
    sim_factory: Any,
) -> None:
    # 1000x: pretrain starts after ~2 s, its hang (30 % in) ~0.7 s later: time enough to
    # slow this run down, watching the engine itself (an HTTP poll can lag on a busy box).
    handle: SimHandle = sim_factory(scenario="hang", speed=1000.0, heartbeat_s=0.2)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client, dict(SMALL_SPEC))["run_id"]
        engine = handle.app.state.desk.engines[rid]
        # The scenario's own slow-down (for the demo) would stretch this test; it has its own.
        for incident in engine.s["incidents"]:
            incident.pop("watch"), incident.pop("lead")
        deadline = time.monotonic() + 30
        while engine.run["current_stage"] != "pretrain" and time.monotonic() < deadline:
            time.sleep(0.002)
        # Slow this run down so its 12 simulated minutes of hang last ~3.6 s of wall time.
        engine.s["speed"] = 200.0
        run = wait_for(client, rid, lambda r: bool(r["faults"]))
        assert run["state"] == "running"
        first = client.get(f"/v1/runs/{rid}/fleet").json()
        time.sleep(0.5)
        second = client.get(f"/v1/runs/{rid}/fleet").json()
        messages: list[Message] = []
        with client.stream("GET", f"/v1/runs/{rid}/events", timeout=30) as response:
            for message in sse_messages(response):
                messages.append(message)
                if message.event == "fault.detected":
                    engine.s["speed"] = 1_000_000.0
    assert first["replicas"][0]["step"] == second["replicas"][0]["step"]
    assert all(r["state"] == "healthy" and r["heartbeat_age_s"] < 5 for r in second["replicas"])
    assert second["quorum"]["participants"] == len(second["replicas"])
    # An NCCL hang's signature in the counters: every GPU busy, spinning in a collective.
    gpus = [g for n in second["nodes"] for g in n["gpus"]]
    assert all(g["util_frac"] == 1.0 and g["power_w"] < 300 for g in gpus)
    events = [m for m in messages if m.event is not None]
    at = next(i for i, m in enumerate(events) if m.event == "fault.detected")
    detected = events[at].envelope
    assert detected["data"]["kind"] == "hang" and detected["data"]["detected_after_s"] == 720
    last_progress = max(i for i in range(at) if events[i].event in PROGRESS)
    quiet = events[last_progress + 1 : at]
    assert [m.event for m in quiet] == [], "nothing between the last progress and detection"
    gap = (_sim(detected) - _sim(events[last_progress].envelope)).total_seconds()
    assert gap >= 720
    # Heartbeats (SSE comments) kept coming while the run said nothing.
    start, end = messages.index(events[last_progress]), messages.index(events[at])
    assert sum(1 for m in messages[start:end] if m.comments) >= 2
    after = [m.event for m in events[at:]]
    assert after[:3] == ["fault.detected", "slo.breached", "run.state_changed"]
    assert "fault.recovered" in after and "telemetry" in after[after.index("fault.recovered") :]
    assert not any(m.event in FLEET for m in events)
    assert after[-1] == "run.completed"


def test_the_fleet_story_is_the_same_for_the_same_seed(sim_factory: Any) -> None:
    stories = []
    for _ in range(2):
        handle = sim_factory(scenario="showcase", seed=3, approval_speed=None)
        envelopes = _run_all(handle)
        with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
            rid = envelopes[0]["run_id"]
            final = client.get(f"/v1/runs/{rid}/fleet").json()
        final.pop("ts"), final.pop("sim_ts")  # wall clock, and the run's creation
        fleet = [(e["seq"], e["type"], e["data"]) for e in envelopes if e["type"] in FLEET]
        for _seq, _type, data in fleet:
            data.pop("fault_id", None)  # carries the run id
        stories.append((fleet, final))
    assert stories[0][0] and stories[0] == stories[1]


def test_a_failure_to_be_watched_plays_out_slower_on_the_wall_clock(sim_factory: Any) -> None:
    """Showcase's failure runs 60x slower from its detection on, so the demo's operator can
    watch the spare join; injected here with `watch` 20 at 3000x: the 540 simulated seconds
    from detection to recovery take 3.6 s, not 0.2 (and the 60 s before it stay fast: the
    run still reads `running` there, and a client would take a slower clock for silence)."""
    handle: SimHandle = sim_factory(speed=3000.0)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["current_stage"] == "pretrain")
        params = {"detect_s": 60, "resume_s": 540, "watch": 20}
        client.post(f"/v1/sim/runs/{rid}/inject", json={"kind": "node_failure", "params": params})
        wait_for(client, rid, lambda r: bool(r["faults"]) and r["faults"][0]["recovered"])
        pace = handle.app.state.desk.engines[rid].speed()
        client.post(f"/v1/runs/{rid}/cancel", headers=key())
        _, messages = read_events(client, rid)
    envelopes = [m.envelope for m in messages]
    detected = next(e for e in envelopes if e["type"] == "fault.detected")
    recovered = next(e for e in envelopes if e["type"] == "fault.recovered")
    assert (_sim(recovered) - _sim(detected)).total_seconds() == 540
    assert (_wall(recovered) - _wall(detected)).total_seconds() >= 2.5, "3000x: 0.18 s"
    assert pace == 3000.0, "full speed again once recovered"


def _wall(envelope: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(envelope["ts"].replace("Z", "+00:00"))


def test_the_cli_offers_every_scenario_the_simulator_has() -> None:
    """`ito-tui demo --scenario` keeps its own copy (the client cannot import desk_sim)."""
    from ito_tui.commands.local import SCENARIOS as OFFERED
    from ito_tui.desk_sim.config import SCENARIOS

    assert OFFERED == SCENARIOS


def test_the_budget_scenarios_slow_node_is_a_straggler_in_the_fleet(sim_factory: Any) -> None:
    """The squeeze's plan.warning names "a straggler node": the fleet shows which one, and
    its step time against the others' is the step rate the warning gives."""
    handle: SimHandle = sim_factory(scenario="budget", approval_speed=None)
    envelopes = _run_all(handle, spec(budget_usd="20000"))
    warning = next(e for e in envelopes if e["type"] == "plan.warning")
    assert warning["data"]["code"] == "throughput.degraded"
    rate = re.search(r"at (\d+)% of plan", warning["data"]["message"])
    assert rate is not None
    frac = int(rate[1]) / 100
    fleet = [e for e in envelopes if e["type"] in FLEET]
    assert [e["type"] for e in fleet] == ["node.degraded", "straggler.detected"]
    assert fleet[0]["seq"] > warning["seq"]
    detected = fleet[1]["data"]
    assert detected["step_time_s"] / detected["fleet_p50_s"] == pytest.approx(1 / frac, rel=0.03)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        snap = client.get(f"/v1/runs/{envelopes[0]['run_id']}/fleet").json()
    flagged = [n["hostname"] for n in snap["nodes"] if n["straggler"]]
    assert flagged == [detected["hostname"]]


def test_the_clock_slows_before_a_hang_so_a_client_learns_the_pace_before_silence(
    sim_factory: Any,
) -> None:
    """`hang` runs 60x slower from 3 quanta before the hang to the restart: at demo speed the
    TUI's silence flag (600 s of the run's clock) shows before the detection (720 s), and
    its clock estimate, measured on events a second apart, is the slowed one."""
    handle: SimHandle = sim_factory(scenario="hang", speed=20_000.0)
    envelopes = _run_all(handle, dict(SMALL_SPEC))
    at = next(i for i, e in enumerate(envelopes) if e["type"] == "fault.detected")
    progress = [e for e in envelopes[:at] if e["type"] == "telemetry"]
    # 333 simulated s per wall s while watched, 20,000 otherwise.
    quiet = (_wall(envelopes[at]) - _wall(progress[-1])).total_seconds()
    assert quiet >= 1.5, "the 750 simulated s of quiet take 0.04 s unwatched"
    lead = (_wall(progress[-1]) - _wall(progress[-3])).total_seconds()
    assert lead >= 0.1, "the last quanta before the hang are watched too"
    recovered = next(i for i, e in enumerate(envelopes) if e["type"] == "fault.recovered")
    gaps = [(_sim(b) - _sim(a)).total_seconds() for a, b in pairwise(progress[-9:])]
    assert max(gaps) <= 180, "a client's usual gap x3 stays within stall_after_s (600 s)"
    assert envelopes[recovered]["seq"] > envelopes[at]["seq"]


def test_a_stage_that_will_hang_reports_often_enough_for_silence_to_show_first(
    sim_factory: Any,
) -> None:
    """The reference 8B pretrain reports every 74 simulated minutes (120 quanta); the stage
    that will hang reports at most every 3 minutes, its checkpoints as often as before."""
    envelopes = _run_all(sim_factory(scenario="hang"))
    at = next(i for i, e in enumerate(envelopes) if e["type"] == "fault.detected")
    before = [e for e in envelopes[:at] if e["type"] == "telemetry" and e["stage"] == "pretrain"]
    gaps = [(_sim(b) - _sim(a)).total_seconds() for a, b in pairwise(before)]
    assert len(before) > 500 and max(gaps) <= 180
    ckpts = [e for e in envelopes[:at] if e["type"] == "checkpoint.saved"]
    spacing = (_sim(ckpts[-1]) - _sim(ckpts[0])).total_seconds() / (len(ckpts) - 1)
    assert spacing > 4000, "checkpoints keep their simulated interval"


@pytest.mark.slow
def test_a_client_following_a_hang_flags_it_silent_once_before_the_backend_does(
    sim_factory: Any,
) -> None:
    """The client's SilenceClock on the live stream (events timed on arrival) near demo
    speed: one silent spell, on the slowed clock it measured, before `fault.detected`;
    the slow-down before the hang raises none of its own."""
    from ito_tui.alerting.silence import SilenceClock
    from ito_tui.contract import parse_event

    handle: SimHandle = sim_factory(scenario="hang", speed=7200.0, heartbeat_s=0.25)
    clock = SilenceClock(600.0, time.monotonic())
    spells: list[tuple[float, float]] = []
    state = {"state": "queued", "stage": ""}
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client, dict(SMALL_SPEC))["run_id"]
        with client.stream("GET", f"/v1/runs/{rid}/events", timeout=30) as response:
            for message in sse_messages(response):
                now = time.monotonic()
                if message.event is None:  # a heartbeat: judge the quiet, as the app does
                    if clock.check(now, state=state["state"], stage=state["stage"], live=True):
                        spells.append((clock.silent_for(now), clock.rate))
                    continue
                event = parse_event(message.envelope)
                if event.type == "run.state_changed":
                    state["state"] = str(message.envelope["data"]["to_state"])
                state["stage"] = event.stage or state["stage"]
                if clock.observe(event, now, state=state["state"], stage=state["stage"]):
                    spells.append((clock.silent_for(now), clock.rate))
                if event.type == "fault.detected":
                    break
        client.post(f"/v1/runs/{rid}/cancel", headers=key())
    assert len(spells) == 1, spells
    silent_for, rate = spells[0]
    assert 600 <= silent_for < 720
    assert rate == pytest.approx(7200 / 60, rel=0.1)
