"""Property: whatever sequence of misbehaviours the server scripts, every seq arrives once."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ito_tui.client import ConnectionState

from .conftest import make_client
from .fakeserver import FakeServer
from .sserun import (
    Behaviour,
    ScriptedRun,
    clean_close,
    drop_mid,
    raw,
    replay_from,
    status,
)

pytestmark = pytest.mark.faults

N = 12

behaviours = st.one_of(
    st.integers(0, 4).map(drop_mid),
    st.integers(0, 4).map(clean_close),
    st.sampled_from([503, 502, 500, 429]).map(lambda c: status(c, {"Retry-After": "0"})),
    st.tuples(st.integers(1, N), st.integers(1, 6)).map(lambda t: replay_from(*t)),
    st.just(raw(b": just a comment\n\n")),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(behaviours, max_size=8))
def test_any_misbehaviour_script_yields_each_seq_once(script: list[Behaviour]) -> None:
    server = FakeServer().start()
    try:
        run = ScriptedRun(server, n=N, script=script)
        states: list[ConnectionState] = []

        async def consume() -> list[int]:
            async with make_client(server.url) as client:
                async with asyncio.timeout(20):
                    return [e.seq async for e in client.events("run_1", on_state=states.append)]

        assert asyncio.run(consume()) == list(range(1, N + 1))
        assert states[-1].status == "closed" and states[-1].last_seq == N
        # Each reconnect resumed from a seq the consumer had (never ahead of it).
        resumed = [int(x) for x in run.last_event_ids if x is not None]
        assert resumed == sorted(resumed) and all(x <= N for x in resumed)
    finally:
        server.stop()
