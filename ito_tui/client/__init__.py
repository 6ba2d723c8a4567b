"""Async client of the Itô training API: typed calls, typed errors, the event stream.

`EventStream` and `ConnectionState` (module `.stream`, which brings the event
models) and `LogStream` are imported on first use of each name.
"""

import importlib
from typing import TYPE_CHECKING

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
from .policy import MAX_JSON_BODY_BYTES, MAX_SSE_LINE_BYTES, StreamPolicy, is_loopback_host

if TYPE_CHECKING:
    from .logstream import LogStream
    from .stream import ConnectionState, EventStream

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
    "LogStream",
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


def __getattr__(name: str) -> object:
    # Called only for a name not defined here.
    if name in ("ConnectionState", "EventStream"):
        return getattr(importlib.import_module(".stream", __name__), name)
    if name == "LogStream":
        return getattr(importlib.import_module(".logstream", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
