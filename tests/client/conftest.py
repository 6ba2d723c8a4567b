"""Fixtures of the client tests: a hostile loopback server and a client pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, RetryPolicy, StreamPolicy
from ito_tui.contract import event_to_json, make_event

from .fakeserver import FakeServer

TOKEN = "tok-5f0e9c1d-do-not-leak"

# Below the 1 s floors on purpose: these servers misbehave on schedule, and the floors
# themselves are tested with the default policies (tests/faults/test_reconnect_storms.py).
FAST_RETRY = RetryPolicy(
    max_attempts=4,
    backoff_base_s=0.01,
    backoff_max_s=0.05,
    retry_after_cap_s=2,
    retry_after_floor_s=0.0,
)
FAST_STREAM = StreamPolicy(
    reconnect_base_s=0.01, reconnect_floor_s=0.0, reconnect_max_s=0.05, stall_timeout_s=0.5
)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    srv = FakeServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def other_server() -> Iterator[FakeServer]:
    srv = FakeServer().start()
    yield srv
    srv.stop()


def make_client(url: str, **kw: Any) -> ItoClient:
    kw.setdefault("token", SecretStr(TOKEN))
    kw.setdefault("timeout", 2.0)
    kw.setdefault("retry", FAST_RETRY)
    kw.setdefault("stream", FAST_STREAM)
    return ItoClient(url, **kw)


@pytest.fixture
async def client(server: FakeServer) -> AsyncIterator[ItoClient]:
    async with make_client(server.url) as c:
        yield c


TS = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def envelope(seq: int, run_id: str = "run_1", terminal: bool = False) -> str:
    """The JSON of a valid event: `run.state_changed`, or `run.completed` if terminal."""
    if terminal:
        event = make_event("run.completed", seq=seq, run_id=run_id, ts=TS, data={"detail": "done"})
    else:
        event = make_event(
            "run.state_changed", seq=seq, run_id=run_id, ts=TS, data={"to_state": "running"}
        )
    return event_to_json(event)


def sse(seq: int, data: str | None = None, event: str = "x", run_id: str = "run_1") -> bytes:
    """One SSE message with `id: seq`."""
    body = data if data is not None else envelope(seq, run_id)
    return f"id: {seq}\nevent: {event}\ndata: {body}\n\n".encode()
