"""The OpenAPI 3.1 document of the contract, from the FastAPI app plus problem+json errors."""

from __future__ import annotations

import copy
import re
from typing import Any

from fastapi import FastAPI

from ito_tui.contract import PROBLEM_CONTENT_TYPE, Problem
from ito_tui.contract.events import UnknownEvent

IDEMPOTENT = {
    ("post", "/v1/runs"),
    ("post", "/v1/runs/{run_id}/cancel"),
    ("post", "/v1/proposals/{proposal_id}/approve"),
    ("post", "/v1/proposals/{proposal_id}/reject"),
}
ERRORS: dict[tuple[str, str], dict[str, str]] = {
    ("post", "/v1/runs"): {
        "404": "booking.not_found",
        "409": "booking.busy, booking.not_active or idempotency.in_flight",
        "422": "validation.failed, run.refused (with refusals[]) or idempotency.key_reused",
        "501": "capability.not_implemented (capability: runs.create) on a scaffold backend",
    },
    ("post", "/v1/estimates"): {"404": "booking.not_found", "422": "validation.failed"},
    ("post", "/v1/runs/{run_id}/cancel"): {"409": "run.terminal or idempotency.in_flight"},
    ("post", "/v1/proposals/{proposal_id}/approve"): {
        "409": "proposal.already_decided (current: the decided proposal), proposal.expired, "
        "run.terminal or idempotency.in_flight"
    },
    ("post", "/v1/sim/runs/{run_id}/inject"): {"409": "run.terminal"},
}
ERRORS[("post", "/v1/proposals/{proposal_id}/reject")] = ERRORS[
    ("post", "/v1/proposals/{proposal_id}/approve")
]
RUN_LINKS = {
    "GetRun": ("get", "/v1/runs/{run_id}"),
    "StreamEvents": ("get", "/v1/runs/{run_id}/events"),
    "GetTelemetry": ("get", "/v1/runs/{run_id}/telemetry"),
    "ListCheckpoints": ("get", "/v1/runs/{run_id}/checkpoints"),
    "ListProposals": ("get", "/v1/runs/{run_id}/proposals"),
    "ListRunInTrail": ("get", "/v1/proposals"),
    "CancelRun": ("post", "/v1/runs/{run_id}/cancel"),
}
PROPOSAL_LINKS = {
    "ApproveFirstProposal": ("post", "/v1/proposals/{proposal_id}/approve"),
    "RejectFirstProposal": ("post", "/v1/proposals/{proposal_id}/reject"),
}
LINKS: dict[tuple[str, str, str], tuple[dict[str, tuple[str, str]], dict[str, str]]] = {
    ("post", "/v1/runs", "202"): (RUN_LINKS, {"run_id": "$response.body#/run_id"}),
    ("get", "/v1/runs/{run_id}/proposals", "200"): (
        PROPOSAL_LINKS,
        {"proposal_id": "$response.body#/0/proposal_id"},
    ),
    ("get", "/v1/proposals", "200"): (
        PROPOSAL_LINKS,
        {"proposal_id": "$response.body#/items/0/proposal_id"},
    ),
}
"""OpenAPI 3.1 response links (runs -> events, telemetry, proposals, the trail filtered by
the run (its `run_id` query parameter); proposal lists and the trail -> decisions)."""
DESCRIPTION = """The Itô training API v1 (API.md), served by the desk simulator.

Errors are RFC 9457 problem+json with a stable `code`. Every response carries
`X-Request-Id`. State-changing POSTs take an `Idempotency-Key`: the same key and
body replay the stored response (`Idempotent-Replayed: true`), the same key with
another body is 422 `idempotency.key_reused`, a key still in flight is 409
`idempotency.in_flight`, a missing key is 400 `idempotency.key_missing`.
Simulated clocks: stage `started_at`/`ended_at`, checkpoint `created_at` and
event `sim_ts` are simulated time; `ts`, run and proposal timestamps are wall time.
"""


SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "description": "One SSE message (OpenAPI 3.1: `schema` describes each event): `id` is the "
    "run's seq, `event` the type, `data` the JSON envelope; a first message may carry only "
    "`retry`.",
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+$"},
        "event": {"type": "string"},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/EventEnvelope"},
        },
        "retry": {"type": "integer", "minimum": 0},
    },
}


SSE_LOG_EVENT: dict[str, Any] = {
    "type": "object",
    "description": "One SSE message of a job log: `id` is the log's seq, `event` is `log` "
    "(`data`: a LogLine) or `log.truncated` (`data`: `{dropped}`); a first message may carry "
    "only `retry`.",
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+$"},
        "event": {"type": "string", "enum": ["log", "log.truncated"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {
                "anyOf": [
                    {"$ref": "#/components/schemas/LogLine"},
                    {
                        "type": "object",
                        "required": ["dropped"],
                        "properties": {"dropped": {"type": "integer", "minimum": 0}},
                    },
                ]
            },
        },
        "retry": {"type": "integer", "minimum": 0},
    },
}


def _problem(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {"X-Request-Id": {"schema": {"type": "string"}}},
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def finish(doc: dict[str, Any]) -> dict[str, Any]:
    """Replace FastAPI's default 422 with problem+json errors and document our headers."""
    doc = copy.deepcopy(doc)
    doc["info"]["description"] = DESCRIPTION
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs", {}))
    schemas["Problem"] = problem
    envelope = UnknownEvent.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in envelope.pop("$defs", {}).items():
        schemas.setdefault(name, definition)
    envelope["title"] = "EventEnvelope"
    envelope["description"] = "The envelope of every event; `data` is the type's payload."
    schemas["EventEnvelope"] = envelope
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    for path, item in doc["paths"].items():
        for method, op in item.items():
            _finish_op(method, path, op)
    _add_links(doc["paths"])
    return doc


def _add_links(paths: dict[str, Any]) -> None:
    """Add the LINKS to the documented responses, keeping any links already there."""
    for (method, path, status), (targets, parameters) in LINKS.items():
        response = paths[path][method]["responses"][status]
        links = response.setdefault("links", {})
        for name, (target_method, target_path) in targets.items():
            links.setdefault(
                name,
                {
                    "operationId": paths[target_path][target_method]["operationId"],
                    "parameters": dict(parameters),
                },
            )


def _finish_op(method: str, path: str, op: dict[str, Any]) -> None:
    if path.startswith("/v1/sim/"):
        op["tags"] = ["simulator"]
    responses: dict[str, Any] = op.setdefault("responses", {})
    responses.pop("422", None)
    for status, response in responses.items():
        response.setdefault("headers", {})["X-Request-Id"] = {"schema": {"type": "string"}}
        if status.startswith("2") and (method, path) in IDEMPOTENT:
            response["headers"]["Idempotent-Replayed"] = {
                "description": "`true` when this is a stored response replayed for the key",
                "schema": {"type": "string"},
            }
    if (method, path) == ("post", "/v1/runs"):
        responses["202"]["headers"]["Location"] = {"schema": {"type": "string"}}
    if path.endswith("/events"):
        responses["200"]["content"].pop("application/json", None)
        responses["200"]["content"]["text/event-stream"] = {"schema": SSE_EVENT}
    if path.endswith("/logs"):
        responses["200"]["content"]["text/event-stream"] = {"schema": SSE_LOG_EVENT}
    params = op.get("parameters", [])
    for param in params:
        if param["in"] == "header" and param["name"].lower() == "idempotency-key":
            param["required"] = True
            param["schema"] = {"type": "string", "minLength": 1, "maxLength": 255}
    if path != "/v1/capabilities":
        responses["401"] = _problem("auth.invalid: missing or unknown bearer token")
    if params:
        responses["400"] = _problem(
            "request.invalid, request.invalid_cursor or idempotency.key_missing"
        )
    if re.search(r"\{\w+\}", path):
        responses["404"] = _problem("run.not_found, booking.not_found or proposal.not_found")
    if "requestBody" in op:
        responses["422"] = _problem("validation.failed (with errors[])")
    if (method, path) in IDEMPOTENT:
        responses["409"] = _problem("idempotency.in_flight")
        responses["422"] = _problem("validation.failed or idempotency.key_reused")
    for status, text in ERRORS.get((method, path), {}).items():
        responses[status] = _problem(text)


def install_openapi(app: FastAPI) -> None:
    """Serve the finished document at /openapi.json."""
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = finish(original())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override hook


def openapi_document() -> dict[str, Any]:
    """OpenAPI 3.1 of the contract as this simulator implements it (`ito-tui contract`)."""
    from .app import create_app
    from .config import SimConfig

    return create_app(SimConfig()).openapi()
