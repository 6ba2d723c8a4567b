"""Response bodies read as they arrive: decompressed a bounded step at a time, capped.

httpx's `aiter_bytes` inflates each network chunk whole, so a few hundred bytes of
gzip can become hundreds of MB in one call, before any cap sees them. Here the
raw bytes (`aiter_raw`) go through zlib with a maximum output per call, and the
caller's cap is checked after every step: memory stays within the cap plus one
step whatever the compression ratio. Only the codings the client asks for
(`ACCEPT_ENCODING`) are decoded; any other is refused, never passed on as data.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator, Sequence

from ._httpx import httpx
from .errors import ProtocolError
from .headers import content_codings, content_length

__all__ = ["ACCEPT_ENCODING", "STEP_BYTES", "iter_body", "read_capped"]

ACCEPT_ENCODING = "gzip, deflate"
"""Sent on every request, so httpx never offers a coding (br, zstd) this module cannot bound."""
STEP_BYTES = 64 * 1024
"""Most bytes one decompression call may produce."""
MAX_CODINGS = 4
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class _BadCoding(Exception):
    """The compressed bytes are not what their Content-Encoding says."""


class _Inflater:
    """One zlib-based coding, producing at most `STEP_BYTES` per decompression call."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._z = zlib.decompressobj(_WBITS[coding])
        # Servers send "deflate" both zlib-wrapped (RFC 9110) and raw; as httpx
        # does, the raw form is tried when the wrapped one fails on the first bytes.
        self._may_switch = coding == "deflate"

    def feed(self, data: bytes) -> Iterator[bytes]:
        z = self._z
        if z.eof:
            return  # bytes after the end of the compressed stream are ignored, as httpx does
        try:
            while True:
                out = z.decompress(data, STEP_BYTES)
                data = z.unconsumed_tail
                if out:
                    self._may_switch = False
                    yield out
                # A full step may leave output pending inside zlib: ask again.
                if z.eof or (not data and len(out) < STEP_BYTES):
                    return
        except zlib.error:
            if not self._may_switch:
                raise _BadCoding(self.coding) from None
        self._may_switch = False
        self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        yield from self.feed(data)

    def finish(self) -> bytes:
        try:
            return self._z.flush()
        except zlib.error:
            raise _BadCoding(self.coding) from None


def _decoders(response: httpx.Response, endpoint: str) -> list[_Inflater]:
    """The inflaters for the response's Content-Encoding, outermost first."""
    # A malformed header (not ASCII, not tokens) is ignored, like any header here.
    codings = [c for c in content_codings(response.headers) or [] if c != "identity"]
    unknown = [c for c in codings if c not in _WBITS]
    if unknown or len(codings) > MAX_CODINGS:
        shown = ", ".join(codings)[:60]
        raise ProtocolError(
            f"{endpoint}: response uses a Content-Encoding the client did not ask for ({shown})",
            status=response.status_code,
            endpoint=endpoint,
        )
    return [_Inflater(c) for c in reversed(codings)]


def _through(stages: Sequence[_Inflater], data: bytes) -> Iterator[bytes]:
    if not stages:
        if data:
            yield data
        return
    for piece in stages[0].feed(data):
        yield from _through(stages[1:], piece)


async def iter_body(
    response: httpx.Response, endpoint: str, cap: int | None = None
) -> AsyncIterator[bytes]:
    """The decoded body in pieces of at most one network chunk or `STEP_BYTES`.

    Raises ProtocolError (naming `endpoint`) past `cap` decoded bytes, on a coding
    the client did not ask for, or on compressed bytes that do not decode.
    """
    stages = _decoders(response, endpoint)
    size = 0

    def counted(piece: bytes) -> bytes:
        nonlocal size
        size += len(piece)
        if cap is not None and size > cap:
            raise ProtocolError(
                f"{endpoint}: response exceeds the {cap}-byte limit"
                + (" once decompressed" if stages else ""),
                status=response.status_code,
                endpoint=endpoint,
            )
        return piece

    try:
        async for raw in response.aiter_raw():
            for piece in _through(stages, raw):
                yield counted(piece)
        for i, stage in enumerate(stages):
            for piece in _through(stages[i + 1 :], stage.finish()):
                yield counted(piece)
    except _BadCoding as exc:
        raise ProtocolError(
            f"{endpoint}: response body could not be decoded (bad Content-Encoding {exc})",
            status=response.status_code,
            endpoint=endpoint,
        ) from None


async def read_capped(response: httpx.Response, cap: int, endpoint: str) -> bytes:
    """The decoded body, refusing (ProtocolError) past `cap` bytes without buffering more."""
    declared = content_length(response.headers)
    if declared is not None and declared > cap:
        raise ProtocolError(
            f"{endpoint}: response of {declared} bytes exceeds the {cap}-byte limit",
            status=response.status_code,
            endpoint=endpoint,
        )
    return b"".join([piece async for piece in iter_body(response, endpoint, cap)])
