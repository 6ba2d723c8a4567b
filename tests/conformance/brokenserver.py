"""A deliberately non-conforming backend: plausible answers with contract violations.

Each violation is one a real backend could plausibly ship, so the checker's
verdicts must name it: whoami ignores the token, errors are plain JSON rather
than problem+json, and no answer carries X-Request-Id.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.caps import capabilities_body

CAPABILITIES = capabilities_body(
    "bookings.read",
    "runs.read",
    missing=("runs.create",),
    mode="production",
    server="broken",
    model_sizes=["8B"],
    max_budget_usd="1000.00",
    event_retention=10,
    heartbeat_s=5,
)


async def capabilities(request: Request) -> JSONResponse:
    return JSONResponse(CAPABILITIES)


async def whoami(request: Request) -> JSONResponse:
    # Violation: answers without checking the token.
    return JSONResponse({"operator": "anyone"})


async def not_found(request: Request) -> JSONResponse:
    # Violation: a plain JSON error instead of application/problem+json.
    return JSONResponse({"error": "not found"}, status_code=404)


async def empty_page(request: Request) -> JSONResponse:
    return JSONResponse({"items": [], "next_cursor": None})


async def runs_create(request: Request) -> JSONResponse:
    # Violation: says runs.create is not implemented but answers 500, not 501.
    return JSONResponse({"error": "boom"}, status_code=500)


def broken_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/v1/capabilities", capabilities),
            Route("/v1/whoami", whoami),
            Route("/v1/bookings", empty_page),
            Route("/v1/bookings/{booking_id}", not_found),
            Route("/v1/runs", empty_page, methods=["GET"]),
            Route("/v1/runs", runs_create, methods=["POST"]),
            Route("/v1/runs/{run_id}", not_found),
        ]
    )
