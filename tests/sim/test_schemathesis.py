"""schemathesis: the OpenAPI document against the running simulator, no failures allowed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from ito_tui.desk_sim import SimConfig, create_app, openapi_document
from tests.support.servers import TOKENS, ServerThread

pytestmark = pytest.mark.faults

MAX_EXAMPLES = int(os.environ.get("ITO_SCHEMATHESIS_EXAMPLES", "12"))
"""Examples per operation; raise it for a deeper run (the default keeps this under ~15 s)."""

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db: Path = tmp_path_factory.mktemp("schemathesis") / "sim.db"
    config = SimConfig(db_path=db, speed=1_000_000.0, scenario="happy", tokens=dict(TOKENS),
                       heartbeat_s=1.0)  # fmt: skip
    server = ServerThread(create_app(config))
    port = server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture(scope="module")
def api_schema() -> Any:
    return schemathesis.openapi.from_dict(openapi_document())


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.long(seconds=14)
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_simulator_conforms_to_its_openapi_document(case: Any, live_url: str) -> None:
    case.call_and_validate(
        base_url=live_url, headers={"Authorization": "Bearer s3cret"}, checks=CHECKS, timeout=10
    )


def test_the_document_is_openapi_3_1_with_problem_errors() -> None:
    doc = openapi_document()
    assert doc["openapi"].startswith("3.1")
    create = doc["paths"]["/v1/runs"]["post"]
    assert set(create["responses"]) >= {"202", "400", "401", "404", "409", "422", "501"}
    assert "application/problem+json" in create["responses"]["422"]["content"]
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    events = doc["paths"]["/v1/runs/{run_id}/events"]["get"]["responses"]
    assert "text/event-stream" in events["200"]["content"] and "204" in events
    inject = doc["paths"]["/v1/sim/runs/{run_id}/inject"]["post"]
    assert inject["x-simulator-only"] is True and inject["tags"] == ["simulator"]
    assert "security" not in doc["paths"]["/v1/capabilities"]["get"]
