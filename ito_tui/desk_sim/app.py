"""The FastAPI application of the simulated desk backend (`create_app`)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ito_tui.contract import PROBLEM_CONTENT_TYPE

from .config import SERVER_VERSION, SimConfig
from .history import seed_history
from .openapi import install_openapi
from .problems import ApiError, problem_response, render
from .routes_desk import router as desk_router
from .routes_fleet import router as fleet_router
from .routes_logs import router as logs_router
from .routes_runs import router as runs_router
from .routes_trail import router as trail_router
from .runtime import Desk
from .sse import router as sse_router

log = logging.getLogger("ito_tui.desk_sim")


class RequestIdMiddleware:
    """Gives every request an id, echoed as `X-Request-Id` on every response, errors too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = "req_" + secrets.token_hex(8)
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                MutableHeaders(scope=message)["X-Request-Id"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            body = (
                '{"type":"about:blank","title":"Internal server error","status":500,'
                f'"code":"internal","request_id":"{request_id}"}}'
            ).encode()
            await send_with_id(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [
                        (b"content-type", PROBLEM_CONTENT_TYPE.encode()),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})


def _field_errors(exc: RequestValidationError) -> tuple[bool, list[dict[str, Any]]]:
    """(whether the body is at fault, the errors as FieldError dicts)."""
    errors = []
    in_body = False
    for err in exc.errors():
        loc = [p if isinstance(p, int) else str(p) for p in err.get("loc", ())]
        in_body = in_body or (bool(loc) and loc[0] == "body")
        errors.append(
            {
                "loc": loc,
                "msg": str(err.get("msg", "invalid")),
                "type": str(err.get("type", "invalid")),
            }
        )
    return in_body, errors


def create_app(config: SimConfig) -> FastAPI:
    """The simulated backend as an ASGI app; the simulator ticks while the app runs."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The store opens only when the app runs, so building the app (e.g. for
        # its OpenAPI document) touches no database.
        desk = Desk(config)
        app.state.desk = desk
        if config.history is not None:
            seed_history(desk, config.history)  # played to its end before we listen
        await desk.start()
        try:
            yield
        finally:
            await desk.stop()

    app = FastAPI(
        title="Itô training API (desk simulator)",
        version=SERVER_VERSION,
        summary="The Itô training API v1, implemented by desk_sim over a deterministic simulator.",
        lifespan=lifespan,
    )
    app.add_middleware(RequestIdMiddleware)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return render(request, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        in_body, errors = _field_errors(exc)
        if in_body:
            return problem_response(
                request, "validation.failed", "the request body is invalid", errors=errors
            )
        return problem_response(request, "request.invalid", "a parameter is invalid", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI raises a bare 400 only when it cannot parse the body (bad JSON/UTF-8).
            return problem_response(
                request,
                "validation.failed",
                str(exc.detail),
                errors=[{"loc": ["body"], "msg": str(exc.detail)}],
            )
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "request.invalid")
        return problem_response(
            request, code, str(exc.detail), status=exc.status_code, headers=dict(exc.headers or {})
        )

    app.include_router(desk_router)
    app.include_router(runs_router)
    app.include_router(trail_router)
    app.include_router(sse_router)
    app.include_router(logs_router)
    app.include_router(fleet_router)
    install_openapi(app)
    return app
