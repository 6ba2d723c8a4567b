"""Typed errors of the client, built from RFC 9457 problem+json bodies.

Every error is an `ItoError` whose `str()` is safe to show an operator: the
problem's title and detail (or a message of ours), never a token, a header or
a stack trace. `error_from_reply` is the single place an HTTP status and body
become one of these classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ito_tui.contract import FieldError, Problem, Proposal, Refusal

from .backoff import parse_retry_after

__all__ = [
    "AuthError",
    "BackendUnavailable",
    "CapabilityMissing",
    "Conflict",
    "Forbidden",
    "ItoError",
    "NotFound",
    "ProtocolError",
    "RateLimited",
    "Refused",
    "TransportPolicyError",
    "ValidationFailed",
    "error_from_reply",
]


class ItoError(Exception):
    """Base of every error the client raises.

    Attributes: `problem` (the parsed problem+json, if any), `status` (HTTP
    status, None when no response arrived), `endpoint` (e.g. `GET /v1/runs/{id}`),
    `request_id` (from `X-Request-Id` or the problem body).
    """

    def __init__(
        self,
        message: str,
        *,
        problem: Problem | None = None,
        status: int | None = None,
        endpoint: str = "",
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.problem = problem
        self.status = status
        self.endpoint = endpoint
        self.request_id = request_id or (problem.request_id if problem else None)

    @property
    def code(self) -> str | None:
        """The problem's stable machine `code`, if the server sent one."""
        return self.problem.code if self.problem else None

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class AuthError(ItoError):
    """401: the token is missing, invalid or revoked. Never retried."""


class Forbidden(ItoError):
    """403: the operator may not act on this resource."""


class NotFound(ItoError):
    """404: the booking, run or proposal does not exist."""


class Conflict(ItoError):
    """409: the resource's current state forbids the action.

    For `proposal.already_decided` the server sends the decided proposal,
    available as `.current`.
    """

    def __init__(self, message: str, *, current: Proposal | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.current = current


class Refused(ItoError):
    """422 `run.refused`: the backend's pre-flight refused the spec (`.refusals`)."""

    def __init__(self, message: str, *, refusals: list[Refusal] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.refusals: list[Refusal] = refusals or []


class ValidationFailed(ItoError):
    """400/422: the request was invalid (`.errors` lists the fields at fault)."""

    def __init__(self, message: str, *, errors: list[FieldError] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.errors: list[FieldError] = errors or []


class CapabilityMissing(ItoError):
    """The backend does not offer `.capability` (listed as missing, or answered 501)."""

    def __init__(self, message: str, *, capability: str | None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.capability = capability


class RateLimited(ItoError):
    """429 after the retries ran out (`.retry_after` in seconds, if the server said)."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class BackendUnavailable(ItoError):
    """No usable answer: connect error, timeout, or 5xx after the retries ran out."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class ProtocolError(ItoError):
    """The backend answered something the contract does not allow.

    A body that is not JSON or does not match the model, a size cap exceeded,
    a redirect, a wrong content type. `.field` names the field at fault (dotted
    path) when there is one.
    """

    def __init__(self, message: str, *, field: str | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.field = field


class TransportPolicyError(ItoError):
    """The backend URL or TLS settings break the transport policy (raised before connecting)."""


def parse_problem(body: bytes) -> Problem | None:
    """The problem+json in `body`, or None when it is not one (never raises)."""
    if not body:
        return None
    try:
        return Problem.model_validate_json(body)
    except (ValidationError, ValueError, RecursionError):
        return None


def _message(problem: Problem | None, status: int, fallback: str) -> str:
    if problem is None:
        return f"{fallback} (HTTP {status})"
    if problem.detail:
        return f"{problem.title}: {problem.detail}"
    return problem.title


def _current_proposal(problem: Problem) -> Proposal | None:
    """The decided proposal a 409 carries (in `current`, or as the body's extras)."""
    candidates: list[Any] = [problem.current, problem.model_extra]
    for candidate in candidates:
        if not isinstance(candidate, Mapping) or "proposal_id" not in candidate:
            continue
        try:
            return Proposal.model_validate(dict(candidate))
        except ValidationError:
            continue
    return None


def parse_retry_after_header(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait per `Retry-After` (delta-seconds or HTTP-date); None if absent/invalid."""
    return parse_retry_after(headers.get("retry-after"))


_FALLBACK_TITLES = {
    400: "Bad request",
    401: "Not authenticated",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict",
    422: "Request refused",
    429: "Rate limited",
    501: "Capability not implemented",
}


def error_from_reply(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    endpoint: str,
    capability: str | None = None,
) -> ItoError:
    """Map a non-2xx answer to its typed error.

    `capability` is the capability the endpoint needs: a 501 without a
    `capability` member is attributed to it.
    """
    problem = parse_problem(body)
    title = _FALLBACK_TITLES.get(status, "Backend error" if status >= 500 else "Request failed")
    msg = _message(problem, status, title)
    kw: dict[str, Any] = {
        "problem": problem,
        "status": status,
        "endpoint": endpoint,
        "request_id": headers.get("x-request-id"),
    }
    code = problem.code if problem else None
    if 300 <= status < 400:
        return ProtocolError(
            f"{endpoint}: the backend answered with a redirect (HTTP {status}); "
            "redirects are not followed",
            **kw,
        )
    if status == 401:
        return AuthError(msg, **kw)
    if status == 403:
        return Forbidden(msg, **kw)
    if status == 404:
        return NotFound(msg, **kw)
    if status == 409:
        current = _current_proposal(problem) if problem else None
        return Conflict(msg, current=current, **kw)
    if status == 422 and code == "run.refused":
        return Refused(msg, refusals=problem.refusals if problem else None, **kw)
    if status in (400, 422):
        return ValidationFailed(msg, errors=problem.errors if problem else None, **kw)
    if status == 429:
        return RateLimited(msg, retry_after=parse_retry_after_header(headers), **kw)
    if status == 501:
        name = (problem.capability if problem else None) or capability
        if problem is None:
            msg = f"The backend does not implement {name or 'this capability'} yet (HTTP 501)"
        return CapabilityMissing(msg, capability=name, **kw)
    if status >= 500:
        return BackendUnavailable(msg, retry_after=parse_retry_after_header(headers), **kw)
    return ItoError(msg, **kw)
