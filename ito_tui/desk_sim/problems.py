"""RFC 9457 problem+json responses: the `ApiError` exception and its rendering."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from ito_tui.contract import ERROR_STATUS, PROBLEM_CONTENT_TYPE

TITLES: dict[str, str] = {
    "idempotency.key_missing": "Idempotency-Key header required",
    "request.invalid_cursor": "Invalid cursor",
    "request.invalid": "Invalid request",
    "auth.invalid": "Not authenticated",
    "booking.forbidden": "Booking not yours",
    "booking.not_found": "Booking not found",
    "run.not_found": "Run not found",
    "proposal.not_found": "Proposal not found",
    "not_found": "Not found",
    "method_not_allowed": "Method not allowed",
    "idempotency.in_flight": "Request with this Idempotency-Key still in flight",
    "booking.busy": "Booking already has an active run",
    "booking.not_active": "Booking cannot take a run",
    "run.terminal": "Run already finished",
    "proposal.already_decided": "Proposal already decided",
    "proposal.expired": "Proposal expired",
    "validation.failed": "Request validation failed",
    "idempotency.key_reused": "Idempotency-Key reused with a different request",
    "run.refused": "Run refused at pre-flight",
    "capability.not_implemented": "Capability not implemented",
    "internal": "Internal server error",
}

STATUS = {**ERROR_STATUS, "method_not_allowed": 405, "internal": 500}


class ApiError(Exception):
    """An error answered as problem+json with a stable `code` (API.md's table)."""

    def __init__(
        self,
        code: str,
        detail: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail or code)
        self.code = code
        self.status = STATUS.get(code, 400)
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def request_id_of(request: Request) -> str:
    """The id the request-id middleware gave this request."""
    return str(request.scope.get("state", {}).get("request_id", ""))


def problem_response(
    request: Request,
    code: str,
    detail: str | None = None,
    *,
    status: int | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """Render one problem+json response; `extra` adds extension members."""
    status = status or STATUS.get(code, 400)
    body: dict[str, Any] = {
        "type": f"https://ito.dev/problems/{code}",
        "title": TITLES.get(code, code),
        "status": status,
        "detail": detail,
        "code": code,
        "request_id": request_id_of(request),
    }
    body.update({k: v for k, v in extra.items() if v is not None})
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM_CONTENT_TYPE)


def render(request: Request, exc: ApiError) -> JSONResponse:
    return problem_response(
        request, exc.code, exc.detail, status=exc.status, headers=exc.headers, **exc.extra
    )
