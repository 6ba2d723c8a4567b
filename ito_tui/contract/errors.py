"""RFC 9457 problem+json bodies and the stable error codes of API.md."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from .common import Resource
from .resources import Refusal

PROBLEM_CONTENT_TYPE = "application/problem+json"

ERROR_STATUS: dict[str, int] = {
    "idempotency.key_missing": 400,
    "request.invalid_cursor": 400,
    "request.invalid": 400,
    "auth.invalid": 401,
    "booking.forbidden": 403,
    "booking.not_found": 404,
    "run.not_found": 404,
    "proposal.not_found": 404,
    "not_found": 404,
    "idempotency.in_flight": 409,
    "booking.busy": 409,
    "booking.not_active": 409,
    "run.terminal": 409,
    "proposal.already_decided": 409,
    "proposal.expired": 409,
    "validation.failed": 422,
    "idempotency.key_reused": 422,
    "run.refused": 422,
    "rate_limited": 429,
    "capability.not_implemented": 501,
    "backend.unavailable": 503,
}
"""Every stable `code` of API.md with its HTTP status."""


class FieldError(Resource):
    loc: list[str | int] = []
    msg: str
    type: str | None = None


class Problem(Resource):
    """An RFC 9457 problem detail with the extension members of API.md."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    code: str
    request_id: str | None = None
    errors: list[FieldError] | None = None
    refusals: list[Refusal] | None = None
    capability: str | None = None
    current: dict[str, Any] | None = None
    """For `proposal.already_decided`: the decided proposal (also the body's extras)."""
