"""Stateful schemathesis: desk_sim's OpenAPI links (runs -> events, telemetry, checkpoints,
proposals, the trail; proposal lists and the trail -> approve/reject) walked against the
running simulator; no failures allowed.

The links live in `ito_tui.desk_sim.openapi` (`LINKS`). A generated `TrainingSpec` almost never
names a seeded booking, so `POST /v1/runs` bodies are swapped for valid specs (the body itself is
fuzzed by tests/sim/test_schemathesis.py); everything reached through a link is generated.
The scenario is `loss-spike` with a proposal TTL of 20 wall milliseconds, and each created
run is waited on until it has ended (its rollback proposal expired): `GET .../events` (SSE,
closed after the terminal event) then returns at once, and what each later call sees no longer
depends on timing. Hypothesis needs that: a walk that branches differently when replayed is
reported as FlakyStrategyDefinition. The price: decisions and cancels reached through links are
refused with 409 (expired / terminal) - the 200/202 paths are covered by tests/sim.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode

from ito_tui.desk_sim import SimConfig, create_app, openapi_document
from ito_tui.desk_sim.openapi import LINKS
from tests.sim.test_schemathesis import CHECKS
from tests.support.servers import TOKENS, ServerThread

pytestmark = pytest.mark.faults

MAX_EXAMPLES = int(os.environ.get("ITO_STATEFUL_EXAMPLES", "80"))
"""Scenarios (each a chain of up to STEPS linked calls); raise it for a deeper run."""
STEPS = int(os.environ.get("ITO_STATEFUL_STEPS", "8"))
AUTH = {"Authorization": "Bearer s3cret"}
TERMINAL = {"completed", "failed", "cancelled"}
BOOKINGS = ("bk_h100_1n", "bk_h100_4n_ib", "bk_h200_2n_roce", "bk_h100_8n_eth")
SPEC: dict[str, Any] = {
    "model_size": "150M",
    "data_ref": "hf://org/ds@main",
    "target_capability": "general-chat",
    "budget_usd": "5000",
}


def sim_config(db: Path) -> SimConfig:
    return SimConfig(
        db_path=db,
        speed=1_000_000.0,
        scenario="loss-spike",
        tokens=dict(TOKENS),
        heartbeat_s=1.0,
        tick_s=0.02,
        approval_speed=None,
        proposal_ttl_s=20_000.0,  # expires at once: the run always ends
    )


def test_the_document_links_runs_to_events_and_proposals_to_decisions() -> None:
    paths = openapi_document()["paths"]
    created = paths["/v1/runs"]["post"]["responses"]["202"]["links"]
    targets = {link["operationId"] for link in created.values()}
    for method, path in (
        ("get", "/v1/runs/{run_id}"),
        ("get", "/v1/runs/{run_id}/events"),
        ("get", "/v1/runs/{run_id}/telemetry"),
        ("get", "/v1/runs/{run_id}/checkpoints"),
        ("get", "/v1/runs/{run_id}/proposals"),
        ("get", "/v1/proposals"),
        ("post", "/v1/runs/{run_id}/cancel"),
    ):
        assert paths[path][method]["operationId"] in targets, path
    assert all(v["parameters"] == {"run_id": "$response.body#/run_id"} for v in created.values())
    decisions = {
        paths["/v1/proposals/{proposal_id}/approve"]["post"]["operationId"],
        paths["/v1/proposals/{proposal_id}/reject"]["post"]["operationId"],
    }
    listed = paths["/v1/runs/{run_id}/proposals"]["get"]["responses"]["200"]["links"]
    assert {v["operationId"] for v in listed.values()} == decisions
    trail = paths["/v1/proposals"]["get"]["responses"]["200"]["links"]
    assert {v["operationId"] for v in trail.values()} == decisions
    first_item = {"proposal_id": "$response.body#/items/0/proposal_id"}
    assert all(v["parameters"] == first_item for v in trail.values())
    assert len(LINKS) == 3


@pytest.mark.slow
@pytest.mark.long(seconds=38)
# 94 s in a whole-suite run on a slower 2-core machine (2026-12-03), near the suite's
# 120 s hang guard; the walk's size is MAX_EXAMPLES, not the clock.
@pytest.mark.timeout(300)
def test_stateful_walk_of_runs_events_and_proposals(tmp_path: Path) -> None:
    # The linked subgraph only: every other operation is covered by tests/sim/test_schemathesis.py.
    schema = schemathesis.openapi.from_dict(openapi_document()).include(
        path_regex=r"^/v1/(runs|proposals)"
    )
    schema.config.generation.update(modes=[GenerationMode.POSITIVE])
    base = schema.as_state_machine()

    class Machine(base):  # type: ignore[valid-type, misc]
        """One fresh simulator per scenario, and a created run is waited on until it ended:
        what the links can reach depends only on Hypothesis' draws, not on timing."""

        seen: ClassVar[Counter[tuple[str, str, int]]] = Counter()
        scenarios: ClassVar[int] = 0

        def setup(self) -> None:
            Machine.scenarios += 1
            self.server = ServerThread(create_app(sim_config(tmp_path / f"{Machine.scenarios}.db")))
            self.url = f"http://127.0.0.1:{self.server.start()}"
            self.created = 0
            self.proposals: list[str] = []

        def teardown(self) -> None:
            self.server.stop()

        def before_call(self, case: Any) -> None:
            if (case.method, case.path) == ("POST", "/v1/runs"):
                booking = BOOKINGS[self.created % len(BOOKINGS)]
                self.created += 1
                case.body = {**SPEC, "booking_id": booking}
            if (case.method, case.path) == ("GET", "/v1/runs/{run_id}/proposals"):
                case.query.pop("status", None)  # the list feeds the decision links
            if (case.method, case.path) == ("GET", "/v1/proposals") and case.query:
                # So does the trail: only the run the link names filters it.
                for name in ("status", "decided_by", "since", "cursor"):
                    case.query.pop(name, None)
            if case.path.startswith("/v1/proposals/{proposal_id}/") and self.proposals:
                # Which draws reach a decision through the link depends on responses that
                # vary with the machine's load (telemetry counts), so a generated id stands
                # in for a listed one once a list has shown one: decisions of real, expired
                # proposals (409) are then reached on every walk, not only on a quiet host.
                params = case.path_parameters
                if params.get("proposal_id") not in self.proposals:
                    params["proposal_id"] = self.proposals[-1]

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": self.url, "headers": dict(AUTH), "timeout": 20}

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            Machine.seen[(case.method, case.path, response.status_code)] += 1
            if (case.method, case.path, response.status_code) == ("POST", "/v1/runs", 202):
                self.wait_for_end(response.json()["run_id"])
            key = (case.method, case.path, response.status_code)
            if key == ("GET", "/v1/runs/{run_id}/proposals", 200):
                self.proposals += [p["proposal_id"] for p in response.json()]
            if key == ("GET", "/v1/proposals", 200):
                self.proposals += [p["proposal_id"] for p in response.json()["items"]]

        def wait_for_end(self, run_id: str) -> None:
            deadline = time.monotonic() + 20
            while True:
                run = httpx.get(f"{self.url}/v1/runs/{run_id}", headers=AUTH).json()
                if run["state"] in TERMINAL and not run["pending_proposal_ids"]:
                    return
                assert time.monotonic() < deadline, run["state"]
                time.sleep(0.01)

        def validate_response(
            self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any
        ) -> None:
            case.validate_response(
                response, checks=CHECKS, transport_kwargs=kwargs or None, recorder=self.recorder
            )

    started = time.monotonic()
    Machine.run(
        settings=settings(
            max_examples=MAX_EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,  # the same walk every run: its coverage asserts below are stable
        )
    )
    elapsed = time.monotonic() - started
    seen = Machine.seen
    print(f"stateful: {sum(seen.values())} calls in {elapsed:.1f}s: {sorted(seen.items())}")

    def calls(method: str, path: str, *statuses: int) -> int:
        return sum(n for (m, p, s), n in seen.items() if (m, p) == (method, path) and s in statuses)

    # The links were followed with real ids, not just generated ones that 404.
    assert calls("POST", "/v1/runs", 202) > 0
    assert calls("GET", "/v1/runs/{run_id}", 200) > 0
    assert calls("GET", "/v1/runs/{run_id}/events", 200, 204) > 0
    assert calls("GET", "/v1/runs/{run_id}/proposals", 200) > 0
    assert calls("GET", "/v1/proposals", 200) > 0
    decided = calls("POST", "/v1/proposals/{proposal_id}/approve", 200, 409)
    decided += calls("POST", "/v1/proposals/{proposal_id}/reject", 200, 409)
    assert decided > 0, "no decision ever reached a real proposal"
