"""The fleet's events from the real simulator: a node failure reduces to node states that
agree with `GET /fleet` at the end, reads in order in the event log, and alerts once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ito_tui.alerting import alert_for
from ito_tui.state import RunState, RunTracker, fleet_view

from .test_against_sim import run_scenario, sim_client


async def test_a_node_failure_chain_agrees_with_the_fleet_snapshot(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(scenario="node-failure")
    events, final = await run_scenario(sim, "node-failure")
    tracker = RunTracker(final.run_id)
    state = RunState.empty(final.run_id)
    node_alerts = 0
    for e in events:
        tracker.feed(e)
        state = state.apply(e)
        a = alert_for(e, state)
        node_alerts += a is not None and a.kind == "node_failed"
    s = tracker.state
    types = [n.type for n in s.node_events]
    assert "node.failed" in types and "node.replaced" in types
    assert types.index("node.failed") < types.index("node.replaced")
    # One alert per node.failed, none again for the fault.detected each one causes.
    failures = types.count("node.failed")
    assert node_alerts == failures and sum(e.type == "fault.detected" for e in events) >= failures
    async with sim_client(sim) as c:
        fleet = await c.fleet(final.run_id)
    snapshot = {n.hostname: str(n.state) for n in fleet.nodes}
    for host, word in s.node_states.items():
        assert snapshot.get(host) == word, (host, word, snapshot)
    assert s.quorum is not None and s.quorum.quorum_id == fleet.quorum.quorum_id
    view = fleet_view(fleet)
    assert {r.hostname for r in view.nodes} == set(snapshot)
    failed = next(n for n in s.node_events if n.type == "node.failed")
    log = [e.text for e in tracker.log if e.type == "node.failed"]
    assert log and log[0].startswith(f"node {failed.hostname} failed")
