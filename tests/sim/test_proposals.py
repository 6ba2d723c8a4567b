"""Human-gated proposals: rollback after an escalated loss spike, extend_budget, expiry."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ito_tui.contract import Problem, Proposal, parse_event
from tests.support.servers import SimHandle

from .helpers import create_run, key, read_events, spec, wait_for


def pending_proposal(client: httpx.Client, run_id: str) -> dict[str, Any]:
    wait_for(client, run_id, lambda r: bool(r["pending_proposal_ids"]))
    items = client.get(f"/v1/runs/{run_id}/proposals", params={"status": "pending"}).json()
    assert len(items) == 1
    found: dict[str, Any] = items[0]
    return found


def test_approved_rollback_rewinds_to_the_checkpoint_and_the_run_continues(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory(scenario="loss-spike")
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        proposal = Proposal.model_validate(pending_proposal(client, rid))
        run = client.get(f"/v1/runs/{rid}").json()
        assert run["state"] == "awaiting_approval"
        assert proposal.kind == "rollback_and_skip" and proposal.run_paused
        assert proposal.trigger.loss_z and proposal.trigger.loss_z >= 12
        assert proposal.trigger.window == 128 and proposal.trigger.step
        target = proposal.action.rollback_to_step
        assert target is not None and target < proposal.trigger.step
        assert proposal.action.checkpoint_id and proposal.action.skip_batches
        assert proposal.impact.lost_steps == proposal.trigger.step - target
        assert proposal.expires_at > proposal.created_at
        path = f"/v1/proposals/{proposal.proposal_id}/approve"
        approved = client.post(path, json={"comment": "rewind"}, headers=key())
        assert approved.status_code == 200, approved.text
        body = Proposal.model_validate(approved.json())
        assert body.status == "approved" and body.decided_by == "alice"
        assert body.comment == "rewind" and body.decided_at is not None
        late = client.post(path, json={}, headers={**key(), **handle.headers("hunter2")})
        assert late.status_code == 409
        problem = Problem.model_validate(late.json())
        assert problem.code == "proposal.already_decided"
        assert problem.current and problem.current["decided_by"] == "alice"
        _, events = read_events(client, rid)
        parsed = [parse_event(m.data) for m in events]
        types = [e.type for e in parsed]
        assert types.index("proposal.approved") < types.index("proposal.executed")
        after = parsed[types.index("proposal.executed") :]
        steps = [getattr(e, "data").step for e in after if e.type == "telemetry"]  # noqa: B009
        assert steps[0] <= target + steps[1] - steps[0]
        assert types[-1] == "run.completed"
        final = client.get(f"/v1/runs/{rid}/proposals").json()
        assert [p["status"] for p in final] == ["executed"]
        terminal = client.post(f"/v1/proposals/{proposal.proposal_id}/reject", headers=key())
        assert terminal.status_code == 409 and terminal.json()["code"] == "run.terminal"


def test_rejected_rollback_lets_the_run_continue_without_rewinding(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(scenario="loss-spike")
    with httpx.Client(base_url=handle.url, headers=handle.headers("hunter2"), timeout=10) as client:
        rid = create_run(client)["run_id"]
        proposal = pending_proposal(client, rid)
        response = client.post(
            f"/v1/proposals/{proposal['proposal_id']}/reject", json={}, headers=key()
        )
        assert response.status_code == 200
        assert response.json()["status"] == "rejected" and response.json()["decided_by"] == "bob"
        done = wait_for(client, rid, lambda r: r["state"] == "completed")
        assert done["pending_proposal_ids"] == []
        _, events = read_events(client, rid)
        types = [m.event for m in events]
        assert "proposal.rejected" in types and "proposal.executed" not in types
        missing = client.post("/v1/proposals/prop_nope/approve", headers=key())
        assert missing.status_code == 404 and missing.json()["code"] == "proposal.not_found"


@pytest.mark.faults
def test_an_unanswered_proposal_expires_and_then_cannot_be_decided(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(
        scenario="loss-spike", approval_speed=4000.0, proposal_ttl_s=2000.0
    )
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        proposal = pending_proposal(client, rid)
        pid = proposal["proposal_id"]
        wait_for(client, rid, lambda r: r["state"] != "awaiting_approval")
        expired = client.get(f"/v1/runs/{rid}/proposals", params={"status": "expired"}).json()
        assert [p["proposal_id"] for p in expired] == [pid]
        response = client.post(f"/v1/proposals/{pid}/approve", headers=key())
        assert response.status_code == 409 and response.json()["code"] == "proposal.expired"
        assert response.json()["current"]["status"] == "expired"
        wait_for(client, rid, lambda r: r["state"] == "completed")


def test_budget_scenario_warns_then_proposes_extension_and_exhausts_without_it(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory(scenario="budget", approval_speed=None)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client, spec(budget_usd="20000"))["run_id"]
        _, events = read_events(client, rid)
        parsed = [parse_event(m.data) for m in events]
        warnings = [getattr(e, "data").threshold_frac for e in parsed if e.type == "budget.warning"]  # noqa: B009
        assert warnings == [0.8, 0.95]
        kinds = [getattr(e, "data").proposal.kind for e in parsed if e.type == "proposal.created"]  # noqa: B009
        assert kinds == ["extend_budget"]
        assert parsed[-1].type == "run.failed"
        assert getattr(parsed[-1], "data").failure.kind == "budget_exhausted"  # noqa: B009
        run = client.get(f"/v1/runs/{rid}").json()
        assert run["failure"]["kind"] == "budget_exhausted"
        assert run["spend"]["usd_spent"] == run["spend"]["budget_usd"]


def test_approving_extend_budget_raises_the_ceiling_and_the_run_completes(
    sim_factory: Any,
) -> None:
    handle: SimHandle = sim_factory(scenario="budget")
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client, spec(budget_usd="20000"))["run_id"]
        proposal = pending_proposal(client, rid)
        assert proposal["kind"] == "extend_budget" and not proposal["run_paused"]
        extra = proposal["action"]["extra_budget_usd"]
        path = f"/v1/proposals/{proposal['proposal_id']}/approve"
        assert client.post(path, headers=key()).status_code == 200
        done = wait_for(client, rid, lambda r: r["state"] in ("completed", "failed"))
        assert done["state"] == "completed"
        assert float(done["spend"]["budget_usd"]) == 20000 + float(extra)
