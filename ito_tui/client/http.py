"""The HTTP layer under `ItoClient`: one shared httpx.AsyncClient, retries, caps, decoding.

Every request goes through `Transport.send`, which owns the retry rules:

- only GETs and POSTs carrying an Idempotency-Key are retried (the same key on
  every attempt); a connect error, where no byte reached the server, is
  retried for any method;
- retried answers: 429, 500, 502, 503, 504 and timeouts/drops; never a 501,
  never another 4xx, never a 401;
- delays are exponential with full jitter, or the server's `Retry-After`
  when it gave one, but never under `retry_after_floor_s` (1 s: a `Retry-After`
  of 0 or a date in the past is no reason to hammer); a `Retry-After` beyond
  `retry_after_cap_s` is not waited for: the error is raised at once with
  `.retry_after` set;
- attempts are bounded (`max_attempts`), and each attempt has a total deadline
  on top of httpx's per-phase timeouts, so a server dripping a byte a second
  cannot hold a request forever.

Bodies are read as they arrive and refused past `MAX_JSON_BODY_BYTES`, counted
after decompression, a bounded step at a time (`body.iter_body`); redirects are
never followed, so the Authorization header only ever goes to the configured
host. The header is built per request from the token source and never logged;
the token is registered with `ito_tui.redaction`, so every sink (logs, error
text, screens) hides it. Parsing sees the bytes the server sent: nothing is
redacted in data, and headers are read from their raw bytes (`headers`).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import SecretStr, TypeAdapter, ValidationError

from ito_tui.redaction import register_secret

from . import headers as wire
from ._httpx import httpx
from .backoff import full_jitter
from .body import ACCEPT_ENCODING, iter_body, read_capped
from .errors import (
    AuthError,
    BackendUnavailable,
    ItoError,
    ProtocolError,
    RateLimited,
    error_from_reply,
)
from .policy import MAX_JSON_BODY_BYTES, RECONNECT_FLOOR_S

__all__ = [
    "ACCEPT_ENCODING",
    "Reply",
    "RetryPolicy",
    "TokenSource",
    "Transport",
    "decode",
    "iter_body",
    "read_capped",
]

log = logging.getLogger("ito_tui.client")

TokenSource = SecretStr | Callable[[], SecretStr | None]
"""A token, or a zero-arg callable returning one (called per request; keep it cheap)."""

T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_NOTHING_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError, TimeoutError)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of the retry loop (small values in tests, defaults for operators)."""

    max_attempts: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    retry_after_cap_s: float = 30.0
    retry_after_floor_s: float = RECONNECT_FLOOR_S
    """Shortest wait for a `Retry-After` (0, negative, a date in the past): 1 s."""


@dataclass(frozen=True)
class Reply:
    """A complete, size-checked answer; `headers` as they arrived (read them with `headers`)."""

    status: int
    headers: httpx.Headers
    body: bytes
    endpoint: str


def _token_value(source: TokenSource | None) -> str | None:
    if source is None:
        return None
    secret = source() if callable(source) else source
    if secret is None:
        return None
    value = secret.get_secret_value() if isinstance(secret, SecretStr) else str(secret)
    # A token with control characters or spaces would make the HTTP library
    # raise an error quoting the header value; refuse it without echoing it.
    if not value or any(not (0x21 <= ord(c) <= 0x7E) for c in value):
        raise AuthError("The stored token contains characters not allowed in an HTTP header")
    # Whatever its source (keyring, ITO_TOKEN, the TUI's cell), the token sent is one
    # no sink may show.
    register_secret(value)
    return value


def _tls_verify_failed(exc: BaseException) -> bool:
    """Whether `exc` (or what it wraps) is a TLS certificate verification failure."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Transport:
    """One shared httpx.AsyncClient per backend plus the request/retry rules."""

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None,
        verify: Any,
        timeout: float,
        user_agent: str,
        retry: RetryPolicy,
        trust_env: bool,
        max_body_bytes: int = MAX_JSON_BODY_BYTES,
    ) -> None:
        self.token = token
        self.retry = retry
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self.http = httpx.AsyncClient(
            base_url=base_url,
            timeout=httpx.Timeout(connect=timeout, read=timeout, write=timeout, pool=timeout),
            follow_redirects=False,
            verify=verify,
            trust_env=trust_env,
            headers={
                "User-Agent": user_agent,
                "Accept": "application/json",
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    def current_token(self) -> str | None:
        """Ask the token source once (call once per request; the value is not kept)."""
        return _token_value(self.token)

    @staticmethod
    def auth_headers(token: str | None) -> dict[str, str]:
        """Authorization for one request (empty when there is no token)."""
        return {"Authorization": f"Bearer {token}"} if token else {}

    @staticmethod
    def unavailable(exc: BaseException, endpoint: str) -> BackendUnavailable:
        """The error for a request that got no usable answer (its text is redacted by ItoError)."""
        kind = "timed out" if isinstance(exc, httpx.TimeoutException | TimeoutError) else "failed"
        detail = str(exc) or type(exc).__name__
        return BackendUnavailable(
            f"Backend unreachable: {endpoint} {kind} ({detail})", endpoint=endpoint
        )

    async def send(
        self,
        method: str,
        path: str,
        *,
        endpoint: str,
        params: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        idempotency_key: str | None = None,
        capability: str | None = None,
    ) -> Reply:
        """Send with the retry rules; return a 2xx reply or raise a typed error."""
        retryable = method == "GET" or idempotency_key is not None
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        last: ItoError | None = None
        for attempt in range(1, self.retry.max_attempts + 1):
            wait: float | None = None
            token = self.current_token()
            try:
                # The deadline bounds a whole attempt; httpx's timeouts bound each phase.
                async with asyncio.timeout(self.timeout * 3):
                    reply = await self._attempt(
                        method,
                        path,
                        endpoint,
                        clean_params,
                        body,
                        {**headers, **self.auth_headers(token)},
                    )
            except _NOTHING_SENT as exc:
                last = self.unavailable(exc, endpoint)
                if _tls_verify_failed(exc):
                    # Retrying cannot fix a certificate; say what can.
                    last.message += (
                        ". The backend's TLS certificate is not trusted: set ca_bundle to the "
                        "CA that issued it"
                    )
                    raise last from None
            except _TRANSIENT as exc:
                last = self.unavailable(exc, endpoint)
                if not retryable:
                    raise last from None
            else:
                log.debug("%s -> %s (attempt %d)", endpoint, reply.status, attempt)
                if 200 <= reply.status < 300:
                    return reply
                err = error_from_reply(
                    reply.status,
                    reply.headers,
                    reply.body,
                    endpoint=endpoint,
                    capability=capability,
                )
                if reply.status not in RETRY_STATUSES or not retryable:
                    raise err
                wait = getattr(err, "retry_after", None)
                if wait is not None and wait > self.retry.retry_after_cap_s:
                    raise err
                last = err
            if attempt == self.retry.max_attempts:
                break
            delay = (
                max(wait, self.retry.retry_after_floor_s)
                if wait is not None
                else full_jitter(attempt, self.retry.backoff_base_s, self.retry.backoff_max_s)
            )
            log.info("%s: retry %d in %.2fs (%s)", endpoint, attempt, delay, type(last).__name__)
            await asyncio.sleep(delay)
        assert last is not None
        if isinstance(last, RateLimited | BackendUnavailable) and last.status is not None:
            last.message = f"{last.message} (gave up after {self.retry.max_attempts} attempts)"
        raise last

    async def _attempt(
        self,
        method: str,
        path: str,
        endpoint: str,
        params: Mapping[str, Any],
        body: bytes | None,
        headers: Mapping[str, str],
    ) -> Reply:
        request = self.http.build_request(
            method, path, params=params, content=body, headers=headers
        )
        response = await self.http.send(request, stream=True)
        try:
            if 300 <= response.status_code < 400:
                return Reply(response.status_code, response.headers, b"", endpoint)
            data = await read_capped(response, self.max_body_bytes, endpoint)
        finally:
            await response.aclose()
        return Reply(response.status_code, response.headers, data, endpoint)


def _is_json(media: str | None) -> bool:
    return media is not None and (media == "application/json" or media.endswith("+json"))


def decode(adapter: TypeAdapter[T], reply: Reply) -> T:
    """Validate a 2xx JSON reply against `adapter`; any mismatch is a ProtocolError."""
    endpoint = reply.endpoint
    kw: dict[str, Any] = {
        "status": reply.status,
        "endpoint": endpoint,
        "request_id": wire.request_id(reply.headers),
    }
    media = wire.media_type(reply.headers)
    if not _is_json(media):
        shown = (media or "none")[:60]
        raise ProtocolError(f"{endpoint}: expected JSON, got content type {shown!r}", **kw)
    try:
        return adapter.validate_json(reply.body)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first: dict[str, Any] = dict(errors[0]) if errors else {}
        if first.get("type") == "json_invalid":
            raise ProtocolError(f"{endpoint}: response body is not valid JSON", **kw) from None
        field = ".".join(str(p) for p in first.get("loc", ())) or None
        reason = str(first.get("msg", "invalid"))
        where = f"field {field!r}" if field else "body"
        raise ProtocolError(
            f"{endpoint}: response {where} does not match the contract: {reason}",
            field=field,
            **kw,
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(
            f"{endpoint}: response body could not be parsed ({type(exc).__name__})", **kw
        ) from None
