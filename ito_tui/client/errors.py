"""Typed errors of the client, built from RFC 9457 problem+json bodies.

Every error is an `ItoError` whose `str()` is safe to show an operator: the
problem's title and detail (or a message of ours), never a token, a header or
a stack trace. `error_from_reply` is the single place an HTTP status and body
become one of these classes.

Error text is a sink: whatever composed it, the message (and `request_id`,
`field`) has every registered secret replaced and is cut to a readable length
with "… (N bytes cut)" — a 1 MiB problem `detail` is not printed whole. The
parsed `problem` itself is the server's data, kept as sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ito_tui.contract import FieldError, Problem, Proposal, Refusal
from ito_tui.redaction import redact_secrets

from . import headers as wire

if TYPE_CHECKING:
    from ._httpx import httpx

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
    "cut_text",
    "error_from_reply",
]

MAX_TITLE_BYTES = 200
MAX_DETAIL_BYTES = 1000
MAX_MESSAGE_BYTES = 2000
"""Bounds of server text in an error message (UTF-8 bytes), and of the message as a whole."""


def cut_text(text: str, max_bytes: int) -> str:
    """`text` cut to at most `max_bytes` UTF-8 bytes (on a character boundary) plus
    "… (N bytes cut)"; unchanged when it fits."""
    if len(text) * 4 <= max_bytes:
        return text  # fast path: no character takes more than 4 bytes
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text
    kept = data[:max_bytes].decode("utf-8", errors="ignore")
    cut = len(data) - len(kept.encode("utf-8", errors="surrogatepass"))
    return f"{kept}… ({cut:,} bytes cut)"


def _safe(text: str, max_bytes: int) -> str:
    # Redact before cutting, so a cut can never leave a secret's prefix behind.
    return cut_text(redact_secrets(text), max_bytes)


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
        super().__init__()
        self.message = message
        self.problem = problem
        self.status = status
        self.endpoint = endpoint
        rid = request_id or (problem.request_id if problem else None)
        self.request_id = _safe(rid, 200) if rid else None

    @property
    def message(self) -> str:
        """The text shown to the operator: secrets redacted, server text bounded."""
        return self._message

    @message.setter
    def message(self, value: str) -> None:
        self._message = _safe(value, MAX_MESSAGE_BYTES)
        self.args = (self._message,)

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
        self.field = _safe(field, 200) if field else None


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
    title = _safe(problem.title, MAX_TITLE_BYTES)
    if problem.detail:
        return f"{title}: {_safe(problem.detail, MAX_DETAIL_BYTES)}"
    return title


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
    headers: httpx.Headers,
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
        "request_id": wire.request_id(headers),
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
        return RateLimited(msg, retry_after=wire.retry_after(headers), **kw)
    if status == 501:
        name = (problem.capability if problem else None) or capability
        if problem is None:
            msg = f"The backend does not implement {name or 'this capability'} yet (HTTP 501)"
        return CapabilityMissing(msg, capability=name, **kw)
    if status >= 500:
        return BackendUnavailable(msg, retry_after=wire.retry_after(headers), **kw)
    return ItoError(msg, **kw)
