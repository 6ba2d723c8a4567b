"""Bearer-token auth and Idempotency-Key handling for the simulated backend's routes."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .problems import ApiError, render
from .runtime import Desk

IN_FLIGHT_STALE_S = 60.0
"""A key claimed this long ago by a request that never finished (a crash) may be reused."""
KEY_MAX_LEN = 255

_bearer = HTTPBearer(auto_error=False, description="Operator token (ITO_SIM_TOKENS).")


# Dependencies, like routes, are all `async def`: FastAPI runs a plain `def` in a thread
# pool, and the desk (its engines, its SQLite connection) belongs to the event loop's
# thread only (see `Store`).
async def desk_of(request: Request) -> Desk:
    desk: Desk = request.app.state.desk
    return desk


DeskDep = Annotated[Desk, Depends(desk_of)]


async def operator_of(
    desk: DeskDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The operator the bearer token maps to; 401 `auth.invalid` otherwise.

    Every configured token is compared in constant time (no early exit), and the
    token itself never reaches a log line or an error body.
    """
    presented = (credentials.credentials if credentials else "").encode()
    found: str | None = None
    for token, operator in desk.config.tokens.items():
        if hmac.compare_digest(token.encode(), presented) and presented:
            found = operator
    if found is None:
        raise ApiError(
            "auth.invalid",
            "missing or unknown bearer token",
            headers={"WWW-Authenticate": 'Bearer realm="ito"'},
        )
    return found


Operator = Annotated[str, Depends(operator_of)]


async def fingerprint(request: Request) -> str:
    body = await request.body()
    try:
        canonical = json.dumps(json.loads(body or b"null"), sort_keys=True, separators=(",", ":"))
    except ValueError:
        canonical = body.decode("utf-8", "replace")
    text = f"{request.method} {request.url.path}\n{canonical}"
    return hashlib.sha256(text.encode()).hexdigest()


class Receipt:
    """Stores the response for an Idempotency-Key, inside the action's own transaction."""

    def __init__(self, desk: Desk, operator: str, key: str) -> None:
        self.desk, self.operator, self.key = desk, operator, key
        self.saved = False

    def saver(self, response: Response) -> Callable[[], None]:
        """A callback for `Desk.commit(also=...)` that records `response` for the key."""

        def save() -> None:
            keep = {
                k: v
                for k, v in response.headers.items()
                if k.lower() in ("content-type", "location")
            }
            self.desk.store.idem_finish(
                self.operator,
                self.key,
                response.status_code,
                json.dumps(keep),
                bytes(response.body).decode(),
            )
            self.saved = True

        return save


async def idempotent(
    request: Request,
    desk: Desk,
    operator: str,
    action: Callable[[Receipt], Awaitable[Response]],
) -> Response:
    """Run a state-changing POST at most once per (operator, Idempotency-Key).

    Same key + same body replays the stored response with `Idempotent-Replayed: true`;
    same key + another body is 422 `idempotency.key_reused`; a key whose first request
    is still running is 409 `idempotency.in_flight`; no key is 400.
    """
    key = request.headers.get("idempotency-key", "").strip()
    if not key:
        raise ApiError("idempotency.key_missing", "send an Idempotency-Key header (a UUID)")
    if len(key) > KEY_MAX_LEN or not key.isprintable():
        raise ApiError("request.invalid", "Idempotency-Key must be 1-255 printable characters")
    fp = await fingerprint(request)
    store = desk.store
    record = store.idem(operator, key)
    if record is not None:
        if record.fingerprint != fp:
            raise ApiError("idempotency.key_reused", "this key was used with a different request")
        if record.state == "in_flight":
            if time.time() - record.created < IN_FLIGHT_STALE_S:
                raise ApiError(
                    "idempotency.in_flight",
                    "the first request with this key is still being processed",
                    headers={"Retry-After": "1"},
                )
        else:
            headers = json.loads(record.headers or "{}")
            headers["Idempotent-Replayed"] = "true"
            return Response(
                content=record.body or "",
                status_code=record.status or 200,
                headers=headers,
            )
    store.idem_claim(operator, key, fp)
    receipt = Receipt(desk, operator, key)
    try:
        response = await action(receipt)
    except ApiError as exc:
        response = render(request, exc)
    except BaseException:
        store.idem_release(operator, key)
        raise
    if response.status_code >= 500:
        store.idem_release(operator, key)
    elif not receipt.saved:
        # No state changed (an error answer): store it on its own.
        receipt.saver(response)()
    return response
