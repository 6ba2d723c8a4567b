"""Every endpoint's success and error paths against a real simulated backend on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ito_tui.contract import Booking, Capabilities, Estimate, Problem, Run, RunSummary, WhoAmI
from tests.support.servers import SimHandle

from .helpers import REFERENCE_SPEC, create_run, key, spec, wait_for


@pytest.fixture
def client(sim: SimHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as c:
        yield c


def problem(response: httpx.Response, status: int, code: str) -> Problem:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = Problem.model_validate(response.json())
    assert body.code == code
    assert body.request_id == response.headers["x-request-id"]
    return body


def test_capabilities_need_no_token_and_say_simulated(sim: SimHandle) -> None:
    response = httpx.get(f"{sim.url}/v1/capabilities")
    assert response.status_code == 200
    caps = Capabilities.model_validate(response.json())
    assert caps.simulated
    assert caps.has("runs.create") and caps.has("sim.inject")
    assert "8B" in caps.model_sizes and "H100-SXM-80GB" in caps.gpu_skus
    assert caps.limits.event_retention == sim.config.event_retention
    assert response.headers["x-request-id"].startswith("req_")


def test_unauthenticated_calls_get_401(sim: SimHandle) -> None:
    paths = ["/v1/whoami", "/v1/bookings", "/v1/runs", "/v1/runs/run_x", "/v1/runs/run_x/events"]
    for path in paths:
        for auth in (None, "Bearer wrong", "Basic czNjcmV0", "Bearer s3cre", "Bearer s3cret2"):
            headers = {"Authorization": auth} if auth else {}
            response = httpx.get(f"{sim.url}{path}", headers=headers)
            body = problem(response, 401, "auth.invalid")
            assert "s3cre" not in response.text and "wrong" not in (body.detail or "")
            assert response.headers["www-authenticate"].startswith("Bearer")
    unauth_post = httpx.post(f"{sim.url}/v1/runs", json=REFERENCE_SPEC, headers=key())
    problem(unauth_post, 401, "auth.invalid")


def test_whoami_maps_each_token_to_its_operator(sim: SimHandle) -> None:
    for token, operator in sim.tokens.items():
        response = httpx.get(f"{sim.url}/v1/whoami", headers=sim.headers(token))
        assert WhoAmI.model_validate(response.json()).operator == operator


def test_bookings_pages_filters_and_lookup(client: httpx.Client) -> None:
    everything = client.get("/v1/bookings").json()
    assert everything["next_cursor"] is None
    all_ids = [Booking.model_validate(b).booking_id for b in everything["items"]]
    assert len(all_ids) >= 6
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = client.get("/v1/bookings", params=params).json()
        seen += [b["booking_id"] for b in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == all_ids
    completed = client.get("/v1/bookings", params={"status": "completed"}).json()["items"]
    assert completed and all(b["status"] == "completed" for b in completed)
    assert client.get("/v1/bookings/bk_h100_1n").json()["booking_id"] == "bk_h100_1n"
    problem(client.get("/v1/bookings/bk_nope"), 404, "booking.not_found")
    problem(client.get("/v1/bookings", params={"cursor": "garbage!"}), 400,
            "request.invalid_cursor")  # fmt: skip
    problem(client.get("/v1/bookings", params={"status": "bogus"}), 400, "request.invalid")
    problem(client.get("/v1/bookings", params={"limit": 0}), 400, "request.invalid")


def test_estimates_plan_refuse_and_validate(client: httpx.Client) -> None:
    ok = Estimate.model_validate(client.post("/v1/estimates", json=REFERENCE_SPEC).json())
    assert ok.plan is not None and not ok.refusals and ok.fits_budget
    refused = client.post(
        "/v1/estimates", json=spec(booking_id="bk_h100_1n", model_size="405B")
    ).json()
    assert "memory.does_not_fit" in [r["code"] for r in refused["refusals"]]
    problem(client.post("/v1/estimates", json=spec(booking_id="bk_nope")), 404,
            "booking.not_found")  # fmt: skip
    body = problem(client.post("/v1/estimates", json=spec(surprise=1)), 422, "validation.failed")
    assert body.errors and body.errors[0].loc[-1] == "surprise"
    problem(client.post("/v1/estimates", json=spec(model_size="big")), 422, "validation.failed")
    problem(client.post("/v1/estimates", content=b"{not json"), 422, "validation.failed")
    # More digits than a decimal context holds (found by schemathesis): 422, not a crash.
    problem(client.post("/v1/estimates", json=spec(budget_usd="9" * 40)), 422,
            "validation.failed")  # fmt: skip


def test_create_run_answers_202_with_location_and_a_run(client: httpx.Client) -> None:
    response = client.post("/v1/runs", json=REFERENCE_SPEC, headers=key())
    assert response.status_code == 202
    run = Run.model_validate(response.json())
    assert response.headers["location"] == f"/v1/runs/{run.run_id}"
    assert run.run_id.startswith("run_") and run.operator == "alice"
    assert run.stages[0].name == "data_prep" and run.last_event_seq >= 1
    assert client.get(f"/v1/bookings/{run.booking_id}").json()["active_run_id"] == run.run_id
    problem(client.post("/v1/runs", json=REFERENCE_SPEC, headers=key()), 409, "booking.busy")
    done = wait_for(client, run.run_id, lambda r: r["state"] == "completed")
    assert done["spend"]["usd_spent"] != "0.00"
    assert client.get(f"/v1/bookings/{run.booking_id}").json()["active_run_id"] is None


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (spec(booking_id="bk_nope"), 404, "booking.not_found"),
        (spec(booking_id="bk_h200_1n_pending"), 409, "booking.not_active"),
        (spec(booking_id="bk_h100_2n_expired"), 409, "booking.not_active"),
        (spec(booking_id="bk_h100_1n", model_size="405B"), 422, "run.refused"),
        (spec(sim={"scenario": "nope"}), 422, "validation.failed"),
        (spec(budget_usd="-5"), 422, "validation.failed"),
    ],
)
def test_create_run_errors(client: httpx.Client, body: dict[str, Any], status: int,
                           code: str) -> None:  # fmt: skip
    found = problem(client.post("/v1/runs", json=body, headers=key()), status, code)
    if code == "run.refused":
        assert found.refusals and found.refusals[0].code == "memory.does_not_fit"
        assert found.refusals[0].reason and found.refusals[0].evidence


def test_refused_scenario_refuses_at_preflight(sim_factory: Any) -> None:
    handle = sim_factory(scenario="refused")
    with httpx.Client(base_url=handle.url, headers=handle.headers()) as c:
        found = problem(c.post("/v1/runs", json=REFERENCE_SPEC, headers=key()), 422,
                        "run.refused")  # fmt: skip
        assert found.refusals and found.refusals[0].code == "fabric.too_slow_for_sync_dp"
        assert c.post("/v1/estimates", json=REFERENCE_SPEC).json()["refusals"]
        assert c.get("/v1/runs").json()["items"] == []


def test_scaffold_mode_reports_runs_create_missing_and_answers_501(sim_factory: Any) -> None:
    handle = sim_factory(mode="scaffold")
    caps = Capabilities.model_validate(httpx.get(f"{handle.url}/v1/capabilities").json())
    assert caps.status_of("runs.create") == "not_implemented"
    with httpx.Client(base_url=handle.url, headers=handle.headers()) as c:
        found = problem(c.post("/v1/runs", json=REFERENCE_SPEC, headers=key()), 501,
                        "capability.not_implemented")  # fmt: skip
        assert found.capability == "runs.create"
        assert c.get("/v1/bookings").status_code == 200


def test_runs_list_get_filters_and_pages(sim: SimHandle, client: httpx.Client) -> None:
    first = create_run(client)
    second = create_run(client, spec(booking_id="bk_h100_1n", model_size="150M",
                                     target_tokens=None, budget_usd="5000"))  # fmt: skip
    listed = client.get("/v1/runs").json()["items"]
    assert [r["run_id"] for r in listed] == [second["run_id"], first["run_id"]]
    RunSummary.model_validate(listed[0])
    page = client.get("/v1/runs", params={"limit": 1}).json()
    assert len(page["items"]) == 1 and page["next_cursor"]
    rest = client.get("/v1/runs", params={"limit": 1, "cursor": page["next_cursor"]}).json()
    assert rest["items"][0]["run_id"] == first["run_id"]
    by_booking = client.get("/v1/runs", params={"booking_id": "bk_h100_1n"}).json()["items"]
    assert [r["run_id"] for r in by_booking] == [second["run_id"]]
    wait_for(client, first["run_id"], lambda r: r["state"] == "completed")
    done = client.get("/v1/runs", params={"state": "completed"}).json()["items"]
    assert first["run_id"] in [r["run_id"] for r in done]
    problem(client.get("/v1/runs", params={"state": "bogus"}), 400, "request.invalid")
    problem(client.get("/v1/runs/run_nope"), 404, "run.not_found")
    run = Run.model_validate(client.get(f"/v1/runs/{first['run_id']}").json())
    assert run.terminal and run.last_event_seq > 100


def test_checkpoints_telemetry_and_proposals_of_a_run(client: httpx.Client) -> None:
    run = create_run(client)
    wait_for(client, run["run_id"], lambda r: r["state"] == "completed")
    rid = run["run_id"]
    checkpoints = client.get(f"/v1/runs/{rid}/checkpoints").json()
    assert checkpoints and all(c["checkpoint_id"].startswith("ckpt_") for c in checkpoints)
    page = client.get(f"/v1/runs/{rid}/telemetry").json()
    assert page["items"] and page["next_since_seq"] == page["items"][-1]["seq"]
    more = client.get(f"/v1/runs/{rid}/telemetry", params={"since_seq": page["next_since_seq"]})
    assert all(s["seq"] > page["next_since_seq"] for s in more.json()["items"])
    small = client.get(f"/v1/runs/{rid}/telemetry", params={"max_points": 20}).json()["items"]
    assert 2 <= len(small) <= 20
    assert client.get(f"/v1/runs/{rid}/proposals").json() == []
    problem(client.get(f"/v1/runs/{rid}/telemetry", params={"max_points": 1}), 400,
            "request.invalid")  # fmt: skip
    for sub in ("checkpoints", "telemetry", "proposals"):
        problem(client.get(f"/v1/runs/run_nope/{sub}"), 404, "run.not_found")
    problem(client.get(f"/v1/runs/{rid}/proposals", params={"status": "x"}), 400,
            "request.invalid")  # fmt: skip


def test_unknown_routes_and_methods_are_problems_with_request_ids(client: httpx.Client) -> None:
    problem(client.get("/v1/nothing"), 404, "not_found")
    problem(client.delete("/v1/runs"), 405, "method_not_allowed")
