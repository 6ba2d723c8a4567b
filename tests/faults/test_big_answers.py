"""Huge answers stay bounded: compression bombs are refused as they inflate, long
problem text is cut before a person sees it.

The bomb is 500 MB of zeros gzip'd twice (`Content-Encoding: gzip, gzip`), a few KB on
the wire, streamed by a raw loopback server. The client runs in a subprocess so its
peak RSS (`ru_maxrss`) can be compared before and after the request: growth must stay
under a bound, and the answer must be a ProtocolError naming the endpoint.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, ProtocolError, RetryPolicy
from tests.client.fakeserver import Conn, FakeServer, Handler, Received
from tests.client.samples import run as sample_run

from .hostile import run_cli

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[2]
BOMB_BYTES = 500 * 1024 * 1024
MAX_GROWTH = 32 * 1024 * 1024
ONE_TRY = RetryPolicy(max_attempts=1)


@cache
def bomb() -> bytes:
    """500 MB of zeros, gzip'd twice, compressed block by block (never held inflated)."""
    inner = zlib.compressobj(1, zlib.DEFLATED, 31)
    outer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [outer.compress(inner.compress(block)) for _ in range(BOMB_BYTES // len(block))]
    parts.append(outer.compress(inner.flush()) + outer.flush())
    return b"".join(parts)


def pieces(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


@pytest.fixture
def bomb_server() -> Iterator[FakeServer]:
    server = FakeServer().start()

    async def json_bomb(req: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"})
        for piece in pieces(bomb()):
            await conn.write(piece)
        await conn.end()

    async def stream_bomb(req: Received, conn: Conn) -> None:
        await conn.head(
            200, {"Content-Type": "text/event-stream", "Content-Encoding": "gzip, gzip"}
        )
        for piece in pieces(bomb()):
            await conn.write(piece)
        await conn.end()

    server.routes[("GET", "/v1/runs/run_1")] = json_bomb
    server.routes[("GET", "/v1/runs/run_1/events")] = stream_bomb
    yield server
    server.stop()


CLIENT = textwrap.dedent(
    """
    import asyncio, json, resource, sys
    from pydantic import SecretStr
    from ito_tui.client import ItoClient, ItoError, RetryPolicy, StreamPolicy
    import ito_tui.client.stream

    def peak() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    async def main(url: str, what: str) -> None:
        policy = StreamPolicy(max_reconnects=0, reconnect_base_s=0.01, reconnect_max_s=0.05)
        async with ItoClient(
            url, token=SecretStr("tok-bomb-7c1d"), retry=RetryPolicy(max_attempts=1),
            stream=policy,
        ) as client:
            await client.capabilities()  # imports, models and the connection pool are warm
            before = peak()
            error = None
            try:
                if what == "json":
                    await client.run("run_1")
                else:
                    async for _ in client.events("run_1", since_seq=0):
                        pass
            except ItoError as exc:
                error = f"{type(exc).__name__}: {exc}"
            print(json.dumps({"error": error, "growth": peak() - before}))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.mark.parametrize(
    ("what", "endpoint"), [("json", "GET /v1/runs/{id}"), ("stream", "GET /v1/runs/{id}/events")]
)
def test_a_compression_bomb_is_refused_with_bounded_memory(
    bomb_server: FakeServer, what: str, endpoint: str
) -> None:
    assert len(bomb()) < 16 * 1024  # a few KB on the wire, 500 MB once inflated
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, bomb_server.url, what],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["error"] is not None and result["error"].startswith("ProtocolError"), result
    assert endpoint in result["error"], result
    assert result["growth"] < MAX_GROWTH, f"peak RSS grew by {result['growth'] / 2**20:.0f} MiB"


async def test_compressed_answers_decode_and_unasked_codings_are_refused() -> None:
    server = FakeServer().start()
    codings = {
        "run_gzip": ("gzip", gzip.compress),
        "run_zlib": ("deflate", zlib.compress),
        "run_raw": ("deflate", lambda b: zlib.compress(b, wbits=-15)),
        "run_two": ("gzip, deflate", lambda b: zlib.compress(gzip.compress(b))),
        "run_br": ("br", lambda b: b),
    }

    def route(run_id: str, coding: str, encode: Callable[[bytes], bytes]) -> Handler:
        async def handler(req: Received, conn: Conn) -> None:
            body = json.dumps({**sample_run(), "run_id": run_id}).encode()
            await conn.send(200, encode(body), {"Content-Encoding": coding})

        return handler

    for run_id, (coding, encode) in codings.items():
        server.routes[("GET", f"/v1/runs/{run_id}")] = route(run_id, coding, encode)
    try:
        async with ItoClient(server.url, token=SecretStr("tok-zip-1"), retry=ONE_TRY) as client:
            for run_id in ("run_gzip", "run_zlib", "run_raw", "run_two"):
                assert (await client.run(run_id)).run_id == run_id
            # Not asked for (and not decodable within a bound here): refused, not parsed.
            with pytest.raises(ProtocolError, match=r"Content-Encoding the client did not ask"):
                await client.run("run_br")
        asked = {r.headers.get("accept-encoding") for r in server.received}
        assert asked == {"gzip, deflate"}, asked
    finally:
        server.stop()


def test_a_1_mib_problem_detail_is_cut_before_it_reaches_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FakeServer().start()
    detail = "the backend explains " + "at length " * 104_858  # ~1 MiB

    async def huge(req: Received, conn: Conn) -> None:
        await conn.problem(404, "run.not_found", "Not found " * 2000, detail=detail)

    server.routes[("GET", "/v1/runs/run_big")] = huge
    monkeypatch.setenv("ITO_TOKEN", "tok-huge-1")
    monkeypatch.setenv("ITO_BACKEND_URL", server.url)
    try:
        code, _, err = run_cli(capsys, monkeypatch, "status", "run_big")
    finally:
        server.stop()
    assert code == 11, err[-500:]
    assert "Not found" in err and "the backend explains at length" in err
    assert "bytes cut)" in err, err[-500:]
    assert len(err.encode()) < 8 * 1024, len(err)
