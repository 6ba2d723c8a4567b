"""`/logs/page`, the capability and its limits, and bad questions (problem+json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ito_tui.contract import PROBLEM_CONTENT_TYPE, LogPage
from tests.support.servers import SimHandle

from .helpers import SMALL_SPEC, create_run, wait_for
from .logs_support import lines_of, read_logs, whole_log


@pytest.fixture
def client(sim: SimHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as c:
        yield c


def finished(client: httpx.Client, spec: dict[str, Any] | None = None) -> str:
    rid = str(create_run(client, spec)["run_id"])
    wait_for(client, rid, lambda r: r["state"] in ("completed", "failed"), timeout=30)
    return rid


def test_pages_walk_back_oldest_first_to_the_start(sim_factory: Any) -> None:
    sim = sim_factory(scenario="showcase", approval_speed=None)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = finished(client)
        _, streamed = read_logs(client, rid, params={"since_seq": 0})
        everything = lines_of(streamed)
        page = LogPage.model_validate_json(
            client.get(f"/v1/runs/{rid}/logs/page", params={"limit": 50}).text
        )
        assert page.items == everything[-50:]
        assert page.next_before_seq == everything[-50].seq
        older = LogPage.model_validate_json(
            client.get(
                f"/v1/runs/{rid}/logs/page",
                params={"limit": 50, "before_seq": page.next_before_seq},
            ).text
        )
        assert older.items == everything[-100:-50]
        first = client.get(f"/v1/runs/{rid}/logs/page", params={"before_seq": 4}).json()
        assert [i["seq"] for i in first["items"]] == [1, 2, 3]
        assert first["next_before_seq"] is None
        assert whole_log(client, rid) == everything
        errors = [x for x in everything if x.level in ("error", "critical")]
        assert errors and whole_log(client, rid, level="error") == errors
        picked = whole_log(client, rid, rank=[0, 5], source=["trainer", "checkpoint"], q="STEP")
        assert picked == [
            x for x in everything
            if x.rank in (0, 5) and x.source in ("trainer", "checkpoint")
            and "step" in x.text.lower()
        ]  # fmt: skip
        assert picked and len(picked) < len(everything)
        nothing = client.get(f"/v1/runs/{rid}/logs/page", params={"q": "zebra crossing"}).json()
        assert nothing == {"items": [], "next_before_seq": None}


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("logs/page", {"limit": 1001}),
        ("logs/page", {"limit": 0}),
        ("logs/page", {"before_seq": 0}),
        ("logs", {"tail": -1}),
        ("logs", {"tail": 100_001}),
        ("logs", {"since_seq": -3}),
        *[
            (path, params)
            for path in ("logs", "logs/page")
            for params in ({"level": "loud"}, {"source": "kernel"}, {"rank": "zero"}, {"q": ""})
        ],
    ],
)
def test_a_bad_question_is_a_400_problem(
    client: httpx.Client, path: str, params: dict[str, Any]
) -> None:
    rid = finished(client, SMALL_SPEC)
    response = client.get(f"/v1/runs/{rid}/{path}", params=params)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith(PROBLEM_CONTENT_TYPE)
    assert response.json()["code"] == "request.invalid"
    bad_id = client.get(f"/v1/runs/{rid}/logs", headers={"Last-Event-ID": "ten"})
    assert bad_id.status_code == 400


def test_an_unknown_run_is_404_and_a_token_is_required(
    sim: SimHandle, client: httpx.Client
) -> None:
    for path in ("logs", "logs/page"):
        response = client.get(f"/v1/runs/run_nope/{path}")
        assert response.status_code == 404
        assert response.json()["code"] == "run.not_found"
        assert httpx.get(f"{sim.url}/v1/runs/run_nope/{path}").status_code == 401
    caps = client.get("/v1/capabilities").json()
    logs = next(c for c in caps["capabilities"] if c["name"] == "runs.logs")
    assert logs["status"] == "available"
    assert caps["limits"]["log_line_bytes"] == 4096
    assert caps["limits"]["log_retention"] == 100_000


def test_a_scaffold_backend_does_not_offer_logs_and_says_501(sim_factory: Any) -> None:
    sim = sim_factory(mode="scaffold")
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        caps = client.get("/v1/capabilities").json()["capabilities"]
        logs = next(c for c in caps if c["name"] == "runs.logs")
        assert logs["status"] == "not_implemented"
        for path in ("logs", "logs/page"):
            response = client.get(f"/v1/runs/run_any/{path}")
            assert response.status_code == 501
            body = json.loads(response.text)
            assert body["code"] == "capability.not_implemented"
            assert body["capability"] == "runs.logs"
