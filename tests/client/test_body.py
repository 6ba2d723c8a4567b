"""Bodies are decompressed a bounded step at a time, exactly, whatever the coding."""

from __future__ import annotations

import gzip
import random
import zlib
from collections.abc import Callable

import httpx
import pytest

from ito_tui.client import ProtocolError
from ito_tui.client.body import STEP_BYTES, iter_body, read_capped

from .fakeserver import Conn, FakeServer, Received

CODINGS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip.compress),
    "deflate": ("deflate", zlib.compress),
    "raw deflate": ("deflate", lambda b: zlib.compress(b, wbits=-15)),
    "gzip then deflate": ("gzip, deflate", lambda b: zlib.compress(gzip.compress(b))),
    "identity": ("identity", lambda b: b),
}
SIZES = (0, 1, STEP_BYTES - 1, STEP_BYTES, STEP_BYTES + 1, 3 * STEP_BYTES, 1_000_003)


def payload(size: int) -> bytes:
    """Half compressible text, half noise, so both long and short steps occur."""
    rng = random.Random(size)
    words = [b"loss ", b"step ", b"gate ", rng.randbytes(7)]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words)
    return bytes(out[:size])


@pytest.mark.parametrize("coding", list(CODINGS))
async def test_every_size_decodes_exactly_in_bounded_steps(server: FakeServer, coding: str) -> None:
    header, encode = CODINGS[coding]

    async def handler(req: Received, conn: Conn) -> None:
        size = int(req.path.rsplit("/", 1)[1])
        await conn.send(200, encode(payload(size)), {"Content-Encoding": header})

    for size in SIZES:
        server.routes[("GET", f"/b/{size}")] = handler
    async with httpx.AsyncClient(base_url=server.url) as http:
        for size in SIZES:
            async with http.stream("GET", f"/b/{size}") as response:
                pieces = [p async for p in iter_body(response, "GET /b")]
            assert b"".join(pieces) == payload(size), (coding, size)
            assert all(0 < len(p) <= max(STEP_BYTES, 65536) for p in pieces), (coding, size)


async def test_a_zip_of_zeros_is_read_a_step_at_a_time_and_cut_at_the_cap(
    server: FakeServer,
) -> None:
    cap = 1 << 20
    zeros = gzip.compress(bytes(64 << 20))  # 64 MiB in ~64 KB, one network read or two

    async def exact(req: Received, conn: Conn) -> None:
        await conn.send(200, gzip.compress(bytes(cap)), {"Content-Encoding": "gzip"})

    async def bomb(req: Received, conn: Conn) -> None:
        await conn.send(200, zeros, {"Content-Encoding": "gzip"})

    server.routes[("GET", "/exact")] = exact
    server.routes[("GET", "/bomb")] = bomb
    async with httpx.AsyncClient(base_url=server.url) as http:
        async with http.stream("GET", "/exact") as response:
            assert await read_capped(response, cap, "GET /exact") == bytes(cap)
        async with http.stream("GET", "/bomb") as response:
            sizes: list[int] = []
            with pytest.raises(ProtocolError, match=r"GET /bomb: .* once decompressed"):
                async for piece in iter_body(response, "GET /bomb", cap):
                    sizes.append(len(piece))
    assert max(sizes) <= STEP_BYTES and sum(sizes) <= cap
