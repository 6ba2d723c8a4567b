"""Transport policy: which URLs may carry a token, TLS verification, caps, timeouts
and the event stream's reconnect tuning (`StreamPolicy`).

Checked when an `ItoClient` is built, before any socket is opened: `https://`
is verified (system/certifi roots, or a given CA bundle); plain `http://` is
allowed only to a loopback address unless the operator passed
`--insecure-http`. Hosts are never resolved here, so the check itself sends
no packet anywhere.
"""

from __future__ import annotations

import ipaddress
import math
import os
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import TransportPolicyError

__all__ = [
    "MAX_JSON_BODY_BYTES",
    "MAX_SSE_LINE_BYTES",
    "RECONNECT_FLOOR_S",
    "BackendTarget",
    "StreamPolicy",
    "check_base_url",
    "is_loopback_host",
    "ssl_context",
]

MAX_JSON_BODY_BYTES = 8 * 1024 * 1024
"""Largest JSON response body (after decompression) the client reads: 8 MiB.

The biggest legitimate body is a page of runs or a full Run snapshot, far
below this; anything larger is refused with a ProtocolError while streaming,
so memory stays bounded whatever the server sends.
"""

MAX_SSE_LINE_BYTES = 4 * 1024 * 1024
"""Longest single SSE line (one event's `data:`) the stream reads: 4 MiB.

A `resync` event carries a whole Run (stages, gates, faults) on one line, so
this is larger than a telemetry sample needs by far; a longer line is refused
with a ProtocolError before it is buffered whole.
"""

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


def is_loopback_host(host: str) -> bool:
    """Whether `host` is a loopback address: 127.0.0.0/8, ::1 (or v4-mapped) or `localhost`.

    Purely syntactic (no DNS lookup): a name other than `localhost` is not
    loopback, whatever it would resolve to.
    """
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped.is_loopback
    return addr.is_loopback


@dataclass(frozen=True)
class BackendTarget:
    """A backend URL that passed the policy: normalised base URL and its properties."""

    base_url: str
    host: str
    https: bool
    loopback: bool


def check_base_url(base_url: str, *, insecure_http: bool = False) -> BackendTarget:
    """Validate `base_url` against the transport policy (raises TransportPolicyError)."""
    try:
        parts = urlsplit(base_url.strip())
        host = parts.hostname or ""
        _ = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise TransportPolicyError(f"Backend URL is not valid: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise TransportPolicyError(
            f"Backend URL must start with https:// (or http:// to this machine), not {scheme!r}"
        )
    if not host:
        raise TransportPolicyError("Backend URL has no host")
    if parts.username is not None or parts.password is not None:
        raise TransportPolicyError(
            "Backend URL must not contain credentials; use `ito-tui login` to store a token"
        )
    if parts.query or parts.fragment:
        raise TransportPolicyError("Backend URL must not contain a query or fragment")
    loopback = is_loopback_host(host)
    if scheme == "http" and not loopback and not insecure_http:
        raise TransportPolicyError(
            f"Refusing plain http:// to {host}: the token would cross the network "
            "unencrypted. Use https://, or pass --insecure-http if you really mean it."
        )
    path = parts.path.rstrip("/")
    netloc = parts.netloc
    return BackendTarget(
        base_url=f"{scheme}://{netloc}{path}",
        host=host,
        https=scheme == "https",
        loopback=loopback,
    )


def ssl_context(ca_bundle: str | None, *, https: bool = True) -> ssl.SSLContext | bool:
    """The TLS verification setting: default roots (True) or a context trusting `ca_bundle`.

    Verification is never turned off: there is deliberately no option for it. For
    a plain `http://` backend (`https=False`) no TLS connection is ever made, so
    the default roots are not loaded (httpx would read certifi's ~150 CA
    certificates, ~20 ms of every command's start): the context given instead
    verifies like any other but trusts no certificate at all.
    """
    if ca_bundle is None:
        return True if https else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    path = os.path.expanduser(ca_bundle)
    if not os.path.isfile(path):
        raise TransportPolicyError(f"CA bundle not found or not a file: {path}")
    try:
        return ssl.create_default_context(cafile=path)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise TransportPolicyError(f"CA bundle could not be loaded: {type(exc).__name__}") from None


RECONNECT_FLOOR_S = 1.0
"""Shortest wait before any reconnect of the event stream, whatever the server says."""

FLEET_REFRESH_S = 5.0
"""The fleet's refresh interval when the backend gives none (API.md v1.1's default)."""
FLEET_REFRESH_MAX_S = 300.0


def fleet_refresh_s(hint: float | None) -> float:
    """The backend's `limits.fleet_refresh_s`, held to 1 s .. 5 min: a limit of 0 (or NaN,
    legal for a float on the wire) must not make the client ask for the fleet in a loop,
    nor a huge one freeze the Nodes view. None or non-finite: `FLEET_REFRESH_S`."""
    if hint is None or not math.isfinite(hint):
        return FLEET_REFRESH_S
    return min(FLEET_REFRESH_MAX_S, max(RECONNECT_FLOOR_S, hint))


@dataclass(frozen=True)
class StreamPolicy:
    """Reconnect and stall tuning (defaults for operators; tests shrink them explicitly).

    No value a server sends (`retry:`, `Retry-After`, `limits.heartbeat_s`) moves a
    reconnect below `reconnect_floor_s` or a wait beyond `reconnect_max_s`, nor the
    stall timeout out of [`stall_min_s`, `stall_max_s`].
    """

    reconnect_base_s: float | None = None
    """Base backoff delay; None = the server's `retry:` (default 1 s)."""
    reconnect_floor_s: float = RECONNECT_FLOOR_S
    """Shortest wait before a reconnect (default 1 s): a `retry: 0`, a `Retry-After: 0`
    or a date in the past, and full jitter's ~0 draws all wait at least this long."""
    reconnect_max_s: float = 30.0
    """Longest wait before a reconnect, however large the server's `retry:` or
    `Retry-After` and however many attempts failed."""
    stall_timeout_s: float | None = None
    """Seconds without a byte before reconnecting; None = 3 × limits.heartbeat_s,
    bounded to [stall_min_s, stall_max_s]."""
    stall_min_s: float = 3.0
    """Shortest derived stall timeout: a `heartbeat_s` of 0 or 0.001 does not tear
    a healthy stream down every few milliseconds."""
    stall_max_s: float = 120.0
    """Longest derived stall timeout: a `heartbeat_s` of 1e9 does not hide a dead socket."""
    max_reconnects: int | None = None
    """Consecutive fruitless reconnects before BackendUnavailable; None = keep trying."""
    max_line_bytes: int = MAX_SSE_LINE_BYTES
    slice_s: float = 0.004
    """Longest run of back-to-back events (the consumer's work on them included) before
    the stream lets the event loop run its other tasks. A backlog arrives in 64 KiB reads
    of ~100 events each; without this a UI sharing the loop waits that long per hop."""

    def __post_init__(self) -> None:
        for name in ("reconnect_floor_s", "reconnect_max_s", "stall_min_s", "stall_max_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"StreamPolicy.{name} must be a finite number >= 0, not {value}")

    def stall_s(self, heartbeat_s: float) -> float:
        """The stall timeout for a server announcing `heartbeat_s` (any float, NaN included)."""
        if self.stall_timeout_s is not None:
            return self.stall_timeout_s
        if not math.isfinite(heartbeat_s) or heartbeat_s <= 0:
            return self.stall_min_s if heartbeat_s <= 0 else self.stall_max_s
        ceiling = max(self.stall_max_s, self.stall_min_s)
        return min(max(3.0 * heartbeat_s, self.stall_min_s), ceiling)
