"""Async client of the Itô training API: typed calls, typed errors, the event stream."""

from .api import DEFAULT_USER_AGENT, ItoClient
from .errors import (
    AuthError,
    BackendUnavailable,
    CapabilityMissing,
    Conflict,
    Forbidden,
    ItoError,
    NotFound,
    ProtocolError,
    RateLimited,
    Refused,
    TransportPolicyError,
    ValidationFailed,
)
from .http import RetryPolicy, TokenSource
from .policy import MAX_JSON_BODY_BYTES, MAX_SSE_LINE_BYTES, is_loopback_host
from .stream import ConnectionState, EventStream, StreamPolicy

__all__ = [
    "DEFAULT_USER_AGENT",
    "MAX_JSON_BODY_BYTES",
    "MAX_SSE_LINE_BYTES",
    "AuthError",
    "BackendUnavailable",
    "CapabilityMissing",
    "Conflict",
    "ConnectionState",
    "EventStream",
    "Forbidden",
    "ItoClient",
    "ItoError",
    "NotFound",
    "ProtocolError",
    "RateLimited",
    "Refused",
    "RetryPolicy",
    "StreamPolicy",
    "TokenSource",
    "TransportPolicyError",
    "ValidationFailed",
    "is_loopback_host",
]
