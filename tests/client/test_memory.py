"""Memory stays bounded while a hostile server streams tens of megabytes at the client."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import pytest

from ito_tui.client import MAX_JSON_BODY_BYTES, MAX_SSE_LINE_BYTES, ItoClient, ProtocolError

from .fakeserver import Conn, FakeServer, Received
from .sserun import SSE_HEADERS

pytestmark = pytest.mark.faults

SENT_BYTES = 48 * 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    yield
    tracemalloc.stop()


async def _flood(conn: Conn, prefix: bytes) -> None:
    await conn.write(prefix)
    block = b"a" * CHUNK
    for _ in range(SENT_BYTES // CHUNK):
        await conn.write(block)


async def test_endless_json_body_peaks_near_the_cap(
    server: FakeServer, client: ItoClient, traced: None
) -> None:
    @server.route("GET", "/v1/whoami")
    async def _(req: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "application/json"})
        await _flood(conn, b'{"operator": "')

    tracemalloc.reset_peak()
    with pytest.raises(ProtocolError):
        await client.whoami()
    _, peak = tracemalloc.get_traced_memory()
    assert peak < 2 * MAX_JSON_BODY_BYTES, f"peak {peak / 2**20:.1f} MiB"


async def test_endless_sse_line_peaks_near_the_cap(
    server: FakeServer, client: ItoClient, traced: None
) -> None:
    @server.route("GET", "/v1/runs/run_1/events")
    async def _(req: Received, conn: Conn) -> None:
        await conn.head(200, SSE_HEADERS)
        await _flood(conn, b"data: ")

    tracemalloc.reset_peak()
    with pytest.raises(ProtocolError):
        async for _event in client.events("run_1"):
            pass
    _, peak = tracemalloc.get_traced_memory()
    assert peak < 2 * MAX_SSE_LINE_BYTES, f"peak {peak / 2**20:.1f} MiB"
