"""Conformance checker: runs API.md against a live backend, check by check.

`ito-tui check-backend` uses this to tell the backend team where a server
departs from the contract: status codes, problem+json bodies, schemas, SSE
framing and `Last-Event-ID` resume, idempotency, and 501 for capabilities the
server says are not wired. It is read-only unless `allow_writes` is given;
even then it submits one minimal run, cancels it straight away (so the run
spends as little as the backend allows) and decides nothing.

Unlike `ItoClient`, the probe here sees raw answers (status, headers, bytes)
and never retries: a conformance check must see what the server actually said.
The same transport policy applies (https verified, http only to loopback).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from ito_tui import __version__
from ito_tui.contract import PROBLEM_CONTENT_TYPE, Capabilities, Problem
from ito_tui.redaction import register_secret

from . import headers as wire
from ._httpx import httpx
from .http import ACCEPT_ENCODING, TokenSource, read_capped
from .policy import MAX_JSON_BODY_BYTES, check_base_url, ssl_context

__all__ = ["Answer", "Check", "CheckStatus", "ConformanceReport", "Probe"]

M = TypeVar("M")


class CheckStatus(StrEnum):
    passed = "pass"
    failed = "fail"
    skipped = "skip"
    not_implemented = "not_implemented"


@dataclass(frozen=True)
class Check:
    """One named check and its verdict; `detail` says why (always, for a failure)."""

    name: str
    status: CheckStatus
    detail: str = ""


@dataclass
class ConformanceReport:
    """Everything a `check-backend` run found, in the order the checks ran."""

    backend: str
    server: dict[str, Any] = field(default_factory=dict)
    capabilities: list[dict[str, Any]] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status is CheckStatus.failed]

    @property
    def not_implemented(self) -> list[str]:
        return [str(c["name"]) for c in self.capabilities if c.get("status") == "not_implemented"]

    def to_json(self) -> dict[str, Any]:
        counts = {s.value: sum(c.status is s for c in self.checks) for s in CheckStatus}
        return {
            "backend": self.backend,
            "server": self.server,
            "capabilities": self.capabilities,
            "checks": [
                {"name": c.name, "status": c.status.value, "detail": c.detail} for c in self.checks
            ],
            "summary": counts,
            "not_implemented": self.not_implemented,
        }


@dataclass(frozen=True)
class Answer:
    """A raw answer: status, headers and the (size-capped) body."""

    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def content_type(self) -> str:
        return wire.media_type(self.headers) or ""


class CheckFailed(Exception):
    """Raised inside a check to fail it with a reason."""


class Probe:
    """Raw HTTP access to one backend for conformance checks (no retries, capped bodies)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None,
        insecure_http: bool = False,
        ca_bundle: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        target = check_base_url(base_url, insecure_http=insecure_http)
        self.base_url = target.base_url
        self._token = token
        self.timeout = timeout
        self.request_ids_missing: list[str] = []
        self.http = httpx.AsyncClient(
            base_url=target.base_url,
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            verify=ssl_context(ca_bundle, https=target.https),
            trust_env=False,
            headers={
                "User-Agent": f"ito-tui-check/{__version__}",
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    def token(self) -> str | None:
        source = self._token
        secret = source() if callable(source) else source
        value = secret.get_secret_value() if secret is not None else None
        register_secret(value)  # the report shows server text: it must never show this
        return value

    def headers(self, *, auth: bool | str = True, **extra: str) -> dict[str, str]:
        out = dict(extra)
        token = auth if isinstance(auth, str) else (self.token() if auth else None)
        if token:
            out["Authorization"] = f"Bearer {token}"
        return out

    async def call(
        self,
        method: str,
        path: str,
        *,
        auth: bool | str = True,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        request = self.http.build_request(
            method,
            path,
            params=params,
            json=json_body,
            headers={**self.headers(auth=auth), **(headers or {})},
        )
        response = await self.http.send(request, stream=True)
        try:
            body = await read_capped(response, MAX_JSON_BODY_BYTES, f"{method} {path}")
        finally:
            await response.aclose()
        if wire.request_id(response.headers) is None:
            self.request_ids_missing.append(f"{method} {path} -> {response.status_code}")
        return Answer(response.status_code, response.headers, body)


# ------------------------------------------------------------------ assertions


def expect_status(answer: Answer, *allowed: int) -> None:
    if answer.status not in allowed:
        want = " or ".join(str(s) for s in allowed)
        raise CheckFailed(f"expected HTTP {want}, got {answer.status}{_code_hint(answer)}")


def _code_hint(answer: Answer) -> str:
    try:
        problem = Problem.model_validate_json(answer.body)
    except ValidationError:
        return ""
    return f" ({problem.code})"


def expect_model(answer: Answer, model: type[M] | TypeAdapter[M]) -> M:
    """Parse `answer` as `model`; a mismatch fails the check naming the first bad field."""
    adapter: TypeAdapter[M] = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    try:
        return adapter.validate_json(answer.body)
    except ValidationError as exc:
        err = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(p) for p in err.get("loc", ())) or "body"
        raise CheckFailed(f"body does not match the schema at {loc}: {err['msg']}") from None


def expect_problem(answer: Answer, status: int, code: str | None = None) -> Problem:
    """The answer is an RFC 9457 problem with this status (and `code`, when given)."""
    expect_status(answer, status)
    if answer.content_type != PROBLEM_CONTENT_TYPE:
        raise CheckFailed(
            f"expected Content-Type {PROBLEM_CONTENT_TYPE}, got {answer.content_type or 'none'}"
        )
    problem = expect_model(answer, Problem)
    if problem.status != status:
        raise CheckFailed(f"problem body says status {problem.status}, HTTP said {status}")
    if code is not None and problem.code != code:
        raise CheckFailed(f"expected code {code}, got {problem.code}")
    header_id = wire.request_id(answer.headers)
    if problem.request_id and header_id and problem.request_id != header_id:
        raise CheckFailed("problem request_id differs from the X-Request-Id header")
    return problem


CheckFn = Callable[[], Awaitable[str | None]]


async def run_check(report: ConformanceReport, name: str, fn: CheckFn) -> bool:
    """Run one check into `report`; returns whether it passed.

    A check returns a detail string (pass), raises CheckFailed (fail) or
    `SkipCheck` (skip). Transport errors fail the check with their class name:
    a conformance run must go on to the next check whatever one server answer did.
    """
    try:
        detail = await fn()
    except SkipCheck as exc:
        report.checks.append(Check(name, CheckStatus.skipped, str(exc)))
        return False
    except CheckFailed as exc:
        report.checks.append(Check(name, CheckStatus.failed, str(exc)))
        return False
    except httpx.HTTPError as exc:
        report.checks.append(Check(name, CheckStatus.failed, f"{type(exc).__name__}: {exc}"))
        return False
    except Exception as exc:  # the checker reports any other error as that check's failure
        report.checks.append(Check(name, CheckStatus.failed, f"{type(exc).__name__}: {exc}"))
        return False
    report.checks.append(Check(name, CheckStatus.passed, detail or ""))
    return True


class SkipCheck(Exception):
    """Raised inside a check when it does not apply to this backend."""


def new_key() -> str:
    return str(uuid.uuid4())


CAPABILITIES = TypeAdapter(Capabilities)
