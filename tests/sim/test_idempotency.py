"""Idempotency-Key semantics of state-changing POSTs: replay, reuse, in flight, missing."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx
import pytest

from tests.support.servers import SimHandle

from .helpers import REFERENCE_SPEC, create_run, spec, wait_for

pytestmark = pytest.mark.faults


def test_same_key_and_body_replays_the_stored_response(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        first = client.post("/v1/runs", json=REFERENCE_SPEC, headers=headers)
        again = client.post("/v1/runs", json=dict(reversed(REFERENCE_SPEC.items())),
                            headers=headers)  # fmt: skip
        assert first.status_code == again.status_code == 202
        assert "idempotent-replayed" not in first.headers
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json()
        assert again.headers["location"] == first.headers["location"]
        assert again.headers["x-request-id"] != first.headers["x-request-id"]
        assert len(client.get("/v1/runs").json()["items"]) == 1


def test_same_key_with_another_body_is_422_key_reused(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        assert client.post("/v1/runs", json=REFERENCE_SPEC, headers=headers).status_code == 202
        other = client.post("/v1/runs", json=spec(budget_usd="29000"), headers=headers)
        assert other.status_code == 422 and other.json()["code"] == "idempotency.key_reused"
        elsewhere = client.post(
            f"/v1/runs/{client.get('/v1/runs').json()['items'][0]['run_id']}/cancel",
            headers=headers,
        )
        assert elsewhere.status_code == 422


def test_keys_are_per_operator(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, timeout=10) as client:
        key = str(uuid.uuid4())
        alice = client.post("/v1/runs", json=REFERENCE_SPEC,
                            headers={**sim.headers(), "Idempotency-Key": key})  # fmt: skip
        bob = client.post("/v1/runs", json=REFERENCE_SPEC,
                          headers={**sim.headers("hunter2"), "Idempotency-Key": key})  # fmt: skip
        assert alice.status_code == 202
        assert bob.status_code == 409 and bob.json()["code"] == "booking.busy"


def test_a_missing_key_is_400_everywhere_it_is_required(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        run = create_run(client)
        for path, body in (
            ("/v1/runs", REFERENCE_SPEC),
            (f"/v1/runs/{run['run_id']}/cancel", {}),
            ("/v1/proposals/prop_x/approve", {}),
            ("/v1/proposals/prop_x/reject", {}),
        ):
            response = client.post(path, json=body)
            assert response.status_code == 400, path
            assert response.json()["code"] == "idempotency.key_missing"


def test_a_key_still_in_flight_is_409(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(preflight_delay_s=0.5)
    key = {"Idempotency-Key": str(uuid.uuid4())}
    results: list[httpx.Response] = []

    def post() -> None:
        with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as c:
            results.append(c.post("/v1/runs", json=REFERENCE_SPEC, headers=key))

    first = threading.Thread(target=post)
    first.start()
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        wait_until_claimed = threading.Event()
        wait_until_claimed.wait(0.2)
        second = client.post("/v1/runs", json=REFERENCE_SPEC, headers=key)
        first.join(10)
        assert second.status_code == 409
        assert second.json()["code"] == "idempotency.in_flight"
        assert results[0].status_code == 202
        replay = client.post("/v1/runs", json=REFERENCE_SPEC, headers=key)
        assert replay.headers["idempotent-replayed"] == "true"
        assert replay.json()["run_id"] == results[0].json()["run_id"]


def test_errors_are_replayed_too(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        key = {"Idempotency-Key": str(uuid.uuid4())}
        refused = spec(booking_id="bk_h100_1n", model_size="405B")
        first = client.post("/v1/runs", json=refused, headers=key)
        again = client.post("/v1/runs", json=refused, headers=key)
        assert first.status_code == again.status_code == 422
        assert again.headers["idempotent-replayed"] == "true"
        assert again.headers["content-type"].startswith("application/problem+json")
        assert again.json() == first.json()


def test_cancel_replay_returns_the_same_answer_after_the_run_ended(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        run = create_run(client)
        key = {"Idempotency-Key": str(uuid.uuid4())}
        path = f"/v1/runs/{run['run_id']}/cancel"
        first = client.post(path, json={"reason": "wrong data"}, headers=key)
        assert first.status_code == 202 and first.json()["state"] == "cancelling"
        done = wait_for(client, run["run_id"], lambda r: r["state"] == "cancelled")
        assert done["failure"] == {"kind": "cancelled", "gate_id": None, "detail": "wrong data"}
        again = client.post(path, json={"reason": "wrong data"}, headers=key)
        assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
        fresh = client.post(path, json={"reason": "wrong data"},
                            headers={"Idempotency-Key": str(uuid.uuid4())})  # fmt: skip
        assert fresh.status_code == 409 and fresh.json()["code"] == "run.terminal"
