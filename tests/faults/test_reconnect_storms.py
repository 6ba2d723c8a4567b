"""No server-sent timing value makes a storm: `retry:`, `Retry-After` and `heartbeat_s`.

desk_sim behind `Tamper`, followed with the DEFAULT policies (the 1 s floor is what
is under test): each case counts the requests the server saw in a bounded window.
A client that honoured `retry: 0` or `Retry-After: 0` made ~2,300 reconnects in 4 s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ConnectionState, ItoClient
from ito_tui.contract import EventBase
from tests.tui.pipeline_live import start_run

from .conftest import Tampered

pytestmark = [pytest.mark.faults, pytest.mark.slow]

SLOW = 20.0
"""Simulated seconds per wall second: the run is still going when each window ends."""
EVENTS = r"/v1/runs/[^/]+/events"
SNAPSHOT = r"/v1/runs/[^/]+"
WINDOW_S = 3.0
MOST = 5
"""Events requests allowed in WINDOW_S: the first, then at least 1 s between any two."""
PAST = "Sun, 06 Nov 1994 08:49:37 GMT"


async def follow_for(
    url: str, run_id: str, seconds: float
) -> tuple[list[EventBase], list[ConnectionState], bool]:
    """Follow the run's stream with the default policies for `seconds`: (events, states,
    whether the stream ended by itself)."""
    events: list[EventBase] = []
    states: list[ConnectionState] = []
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        stream = client.events(run_id, on_state=states.append)

        async def consume() -> None:
            async for event in stream:
                events.append(event)

        task = asyncio.create_task(consume())
        await asyncio.sleep(seconds)
        ended = task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await stream.aclose()
    return events, states, ended


async def running(tampered: Callable[..., Tampered]) -> tuple[Tampered, str]:
    t = tampered(speed=SLOW)
    return t, await start_run(t.url, "happy")


@pytest.mark.parametrize("retry", ["0", "²", "99999999999"])
async def test_a_retry_field_and_an_immediate_close_in_a_loop_cannot_storm(
    tampered: Any, caplog: pytest.LogCaptureFixture, retry: str
) -> None:
    """`retry: 0` (or a Unicode digit, or 3 years) then a clean close, on every connect."""
    t, run_id = await running(tampered)
    t.tamper.sse_retry(retry)
    t.tamper.flap(0.0)  # every stream ends right after its `retry:`
    caplog.set_level(logging.INFO, "ito_tui.client.stream")
    since = time.monotonic()
    _, states, ended = await follow_for(t.url, run_id, WINDOW_S)
    opened = t.tamper.count(EVENTS, since)
    assert not ended
    assert 1 <= opened <= MOST, opened
    # Each end re-reads the snapshot once: no second storm there either.
    assert t.tamper.count(SNAPSHOT, since) <= opened
    assert states[-1].status == "closed" and max(s.reconnects for s in states) >= 1
    # One log line for the first reconnect, not one per reconnect.
    lines = [r for r in caplog.records if r.name == "ito_tui.client.stream"]
    assert len([r for r in lines if r.levelno >= logging.INFO]) <= 2, lines


@pytest.mark.parametrize(
    ("status", "value"),
    [
        *[(429, v) for v in ("0", "-5", PAST, "1e9", "NaN", "soon", "0, 0", "²")],
        *[(503, v) for v in ("0", PAST)],
    ],
)
async def test_retry_after_of_any_form_cannot_storm(tampered: Any, status: int, value: str) -> None:
    t, run_id = await running(tampered)
    t.tamper.answer(EVENTS + "$", lambda i: (status, {"Retry-After": value}))
    since = time.monotonic()
    _, states, ended = await follow_for(t.url, run_id, WINDOW_S)
    opened = t.tamper.count(EVENTS, since)
    assert not ended
    assert 1 <= opened <= MOST, opened
    waits = [s.retry_in_s for s in states if s.status == "reconnecting" and s.retry_in_s]
    assert waits and all(1.0 <= w <= 30.0 for w in waits), waits


@pytest.mark.parametrize("heartbeat", [0, 0.001, -1.0])
async def test_a_tiny_heartbeat_claim_does_not_tear_a_healthy_stream_down(
    tampered: Any, heartbeat: float
) -> None:
    """desk_sim sends a keepalive every second; its capabilities claim `heartbeat_s` ≈ 0
    (and `retry: 0`): the stall timeout derived from it stays ≥ 3 s, so nothing reconnects."""
    t, run_id = await running(tampered)
    t.tamper.break_json(
        r"/v1/capabilities$",
        lambda caps: {**caps, "limits": {**caps["limits"], "heartbeat_s": heartbeat}},
    )
    t.tamper.sse_retry(0)
    since = time.monotonic()
    _, states, ended = await follow_for(t.url, run_id, WINDOW_S + 1)
    assert not ended
    assert t.tamper.count(EVENTS, since) == 1
    assert not [s for s in states if s.status == "reconnecting"]


@pytest.mark.parametrize("value", ["0", PAST])
async def test_the_rest_retry_loop_keeps_the_floor_too(tampered: Any, value: str) -> None:
    """`GET /v1/runs/{id}` answered 429 `Retry-After: 0`: 4 attempts, at least 1 s apart."""
    t, run_id = await running(tampered)
    t.tamper.answer(SNAPSHOT + "$", lambda i: (429, {"Retry-After": value}))
    async with ItoClient(t.url, token=SecretStr("s3cret")) as client:
        await client.capabilities()
        since = time.monotonic()
        task = asyncio.create_task(client.run(run_id))
        await asyncio.sleep(2.5)
        asked = t.tamper.count(SNAPSHOT, since)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert 1 <= asked <= 3, asked
