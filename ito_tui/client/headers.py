"""Response headers are bytes until proven text: the few the client reads, parsed strictly.

httpx keeps header values as the bytes that arrived and decodes them (ASCII, else
UTF-8, else latin-1) when asked; anything rebuilt from those strings, or a value
outside its grammar (a `Retry-After` written as UTF-8), is a way for one proxy's
`X-Served-By: café` to break every command. So the client reads every header
through `header()`: the raw value must be ASCII, within a length bound and match
the header's grammar, or the header is ignored (None). Repeated copies must agree.
Headers the client does not read are never decoded at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from ._httpx import httpx
from .backoff import parse_retry_after

__all__ = [
    "content_codings",
    "content_length",
    "header",
    "location",
    "media_type",
    "replayed",
    "request_id",
    "retry_after",
]

T = TypeVar("T")

_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_VISIBLE = re.compile(rb"[\x21-\x7e]+")
_MEDIA = re.compile(rb"(" + _TOKEN + rb"/" + _TOKEN + rb")[ \t]*(?:;.*)?", re.DOTALL)
_CODINGS = re.compile(_TOKEN + rb"(?:[ \t]*,[ \t]*" + _TOKEN + rb")*")
_DIGITS = re.compile(rb"[0-9]{1,15}")
# delta-seconds (a decimal fraction tolerated) or an HTTP-date's characters; the
# date itself is then checked by the parser.
_RETRY_AFTER = re.compile(rb"[0-9]{1,12}(?:\.[0-9]{1,6})?|[A-Za-z0-9 ,:\-]{6,40}")
_BOOLEAN = re.compile(rb"(?i)true|false")


def header(
    headers: httpx.Headers,
    name: str,
    grammar: re.Pattern[bytes],
    max_len: int,
    parse: Callable[[bytes], T | None],
) -> T | None:
    """The value of header `name` parsed from its raw bytes, or None when absent or malformed.

    A value is used only if, stripped of surrounding blanks, it is at most
    `max_len` bytes, fully matches `grammar` and `parse` accepts it; when the
    header is repeated, every copy must parse to the same value.
    """
    key = name.lower().encode("ascii")
    found: T | None = None
    for raw_key, raw_value in headers.raw:
        if raw_key.lower() != key:
            continue
        value = raw_value.strip(b" \t")
        if len(value) > max_len or grammar.fullmatch(value) is None:
            return None
        parsed = parse(value)
        if parsed is None or (found is not None and parsed != found):
            return None
        found = parsed
    return found


def _ascii(value: bytes) -> str:
    return value.decode("ascii")


def request_id(headers: httpx.Headers) -> str | None:
    """`X-Request-Id`: 1–128 visible ASCII characters."""
    return header(headers, "x-request-id", _VISIBLE, 128, _ascii)


def media_type(headers: httpx.Headers) -> str | None:
    """`Content-Type`'s media type, lower-cased (`application/json`); parameters are not read."""

    def parse(value: bytes) -> str | None:
        match = _MEDIA.fullmatch(value)
        return match.group(1).decode("ascii").lower() if match else None

    # Only the media type must be ASCII: parameters (read by nobody here) may hold anything.
    return header(headers, "content-type", re.compile(rb".+", re.DOTALL), 512, parse)


def content_length(headers: httpx.Headers) -> int | None:
    """`Content-Length` in bytes."""
    return header(headers, "content-length", _DIGITS, 15, int)


def content_codings(headers: httpx.Headers) -> list[str] | None:
    """`Content-Encoding`: lower-cased codings in the order they were applied."""

    def parse(value: bytes) -> list[str]:
        return [c.strip(b" \t").decode("ascii").lower() for c in value.split(b",")]

    return header(headers, "content-encoding", _CODINGS, 128, parse)


def retry_after(headers: httpx.Headers) -> float | None:
    """`Retry-After` in seconds (delta-seconds or HTTP-date, never negative)."""
    return header(headers, "retry-after", _RETRY_AFTER, 40, lambda v: parse_retry_after(_ascii(v)))


def location(headers: httpx.Headers) -> str | None:
    """`Location`: up to 2048 visible ASCII characters."""
    return header(headers, "location", _VISIBLE, 2048, _ascii)


def replayed(headers: httpx.Headers) -> bool | None:
    """`Idempotent-Replayed`: true or false."""
    return header(headers, "idempotent-replayed", _BOOLEAN, 5, lambda v: v.lower() == b"true")
