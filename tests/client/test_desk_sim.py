"""The client against the real simulated backend (desk_sim as a subprocess on loopback).

Uses the shared `SimProcess` (tests/simproc.py); durability tests pin the port
with `port=` so the client's URL survives SIGKILL and restart.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from ito_tui.client import (
    AuthError,
    CapabilityMissing,
    ConnectionState,
    ItoClient,
    NotFound,
    Refused,
    RetryPolicy,
    StreamPolicy,
)
from ito_tui.contract import EventBase, TrainingSpec, event_to_json
from tests.simproc import SimProcess

from .tcpproxy import TcpProxy

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


RETRY = RetryPolicy(max_attempts=6, backoff_base_s=0.05, backoff_max_s=0.5)
STREAM = StreamPolicy(reconnect_base_s=0.05, reconnect_floor_s=0.05, reconnect_max_s=0.5)


SIM_TOKEN = "s3cret"


def sim_client(url: str, token: str | None = SIM_TOKEN) -> ItoClient:
    return ItoClient(
        url,
        token=SecretStr(token) if token else None,
        timeout=5.0,
        retry=RETRY,
        stream=STREAM,
    )


@pytest.fixture(scope="module")
def happy_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcess]:
    db = tmp_path_factory.mktemp("sim") / "happy.db"
    sim = SimProcess(db, speed=100000, scenario="happy", heartbeat=0.5)
    sim.start()
    yield sim
    sim.stop()


@pytest.fixture
async def client(happy_sim: SimProcess) -> AsyncIterator[ItoClient]:
    async with sim_client(happy_sim.url) as c:
        yield c


async def small_spec(client: ItoClient, **overrides: object) -> TrainingSpec:
    bookings = await client.bookings(status="completed")
    fields: dict[str, object] = {
        "booking_id": bookings[0].booking_id,
        "model_size": "150M",
        "data_ref": "catalog://fineweb-edu@1.3",
        "target_capability": "general",
        "budget_usd": "30000",
    }
    return TrainingSpec.model_validate(fields | overrides)


async def test_typed_read_paths(client: ItoClient) -> None:
    caps = await client.capabilities()
    assert caps.simulated and caps.has("runs.create")
    assert (await client.whoami()).operator == "alice"
    bookings = await client.bookings()
    completed = await client.bookings(status="completed")
    assert completed and all(b.status == "completed" for b in completed)
    assert len(bookings) >= len(completed)
    assert (await client.booking(completed[0].booking_id)).booking_id == completed[0].booking_id
    with pytest.raises(NotFound):
        await client.booking("bk_does_not_exist")
    with pytest.raises(NotFound):
        await client.run("run_does_not_exist")


@pytest.mark.faults
async def test_wrong_token_is_auth_error(happy_sim: SimProcess) -> None:
    async with sim_client(happy_sim.url, token="wrong") as c:
        with pytest.raises(AuthError):
            await c.whoami()


async def test_estimate_and_refusal(client: ItoClient) -> None:
    spec = await small_spec(client)
    estimate = await client.estimate(spec)
    assert estimate.plan is not None and not estimate.refusals
    with pytest.raises(Refused) as info:
        await client.create_run(await small_spec(client, model_size="405B", budget_usd="10"))
    assert info.value.refusals


async def test_whole_happy_run_streams_to_completion(client: ItoClient) -> None:
    spec = await small_spec(client)
    run = await client.create_run(spec, idempotency_key="happy-run-1")
    again = await client.create_run(spec, idempotency_key="happy-run-1")
    assert again.run_id == run.run_id, "same key + same body replays the stored response"
    events: list[EventBase] = []
    async with asyncio.timeout(30):
        async for event in client.events(run.run_id):
            events.append(event)
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert events[0].type == "run.accepted" and events[-1].type == "run.completed"
    final = await client.run(run.run_id)
    assert final.state == "completed" and final.last_event_seq == seqs[-1]
    assert (await client.telemetry(run.run_id, max_points=50)).items
    assert await client.checkpoints(run.run_id)
    assert run.run_id in [r.run_id for r in await client.runs()]
    # Resuming at the terminal event: 204, nothing more.
    assert [e async for e in client.events(run.run_id, since_seq=seqs[-1])] == []
    tail = [e.seq async for e in client.events(run.run_id, since_seq=seqs[-5])]
    assert tail == seqs[-4:]


async def test_scaffold_mode_reports_missing_capability(tmp_path: Path) -> None:
    sim = SimProcess(tmp_path / "scaffold.db", mode="scaffold", speed=1000)
    sim.start()
    try:
        async with sim_client(sim.url) as c:
            spec = await small_spec(c)
            with pytest.raises(CapabilityMissing) as info:
                await c.create_run(spec)
            assert info.value.capability == "runs.create"
    finally:
        sim.kill()


@pytest.mark.faults
async def test_sigkill_restarts_mid_run_lose_and_repeat_nothing(tmp_path: Path) -> None:
    """SIGKILL the backend several times mid-run: the consumer still sees every seq once."""
    sim = SimProcess(
        tmp_path / "sim.db", port=free_port(), speed=3000, scenario="happy", heartbeat=0.5
    )
    sim.start()
    try:
        async with sim_client(sim.url) as c:
            run = await c.create_run(await small_spec(c))
            events: list[EventBase] = []
            states: list[ConnectionState] = []
            kills = 0

            async def consume() -> None:
                async for event in c.events(run.run_id, on_state=states.append):
                    events.append(event)

            consumer = asyncio.create_task(consume())
            started = time.monotonic()
            while not consumer.done() and kills < 4 and time.monotonic() - started < 40:
                await asyncio.sleep(0.5)
                if events and not consumer.done():
                    await asyncio.to_thread(sim.restart)
                    kills += 1
            async with asyncio.timeout(60):
                await consumer
            assert kills >= 3, "the run ended before the backend could be killed 3 times"
            assert "reconnecting" in [s.status for s in states]
            seqs = [e.seq for e in events]
            assert seqs == list(range(1, len(seqs) + 1))
            assert events[-1].terminal
            # What the consumer saw is exactly what the server stored.
            async with sim_client(sim.url) as fresh:
                stored = [event_to_json(e) async for e in fresh.events(run.run_id)]
            assert [event_to_json(e) for e in events] == stored
    finally:
        sim.kill()


@pytest.mark.faults
async def test_proxy_drops_and_stalls_mid_run(tmp_path: Path) -> None:
    """Through a proxy that resets and freezes connections, the stream stays exactly-once."""
    # ~10 s of run (1,500x) for the ~5.4 s of faults below: at 4,000x a loaded machine's
    # run ended after three.
    sim = SimProcess(tmp_path / "sim.db", speed=1500, scenario="happy", heartbeat=0.2)
    sim.start()
    proxy = TcpProxy(int(sim.url.rsplit(":", 1)[1])).start()
    try:
        policy = StreamPolicy(  # stall: 3 × 0.2 s
            reconnect_base_s=0.05, reconnect_floor_s=0.05, reconnect_max_s=0.3, stall_min_s=0.3
        )
        async with ItoClient(
            proxy.url, token=SecretStr("s3cret"), timeout=5.0, retry=RETRY, stream=policy
        ) as c:
            run = await c.create_run(await small_spec(c))
            events: list[EventBase] = []
            states: list[ConnectionState] = []

            async def consume() -> None:
                async for event in c.events(run.run_id, on_state=states.append):
                    events.append(event)

            consumer = asyncio.create_task(consume())
            faults = 0
            while not consumer.done() and faults < 6:
                await asyncio.sleep(0.4)
                if faults % 2 == 0:
                    proxy.drop_all()
                else:
                    proxy.stall_all()
                    await asyncio.sleep(1.0)  # longer than the 0.6 s stall timeout
                    proxy.resume()
                faults += 1
            async with asyncio.timeout(60):
                await consumer
            assert faults >= 4, f"the run ended after {faults} faults"
            errors = [s.error or "" for s in states if s.status == "reconnecting"]
            assert any("stalled" in e for e in errors), errors
            seqs = [e.seq for e in events]
            assert seqs == list(range(1, len(seqs) + 1)) and events[-1].terminal
        async with sim_client(sim.url) as fresh:
            stored = [event_to_json(e) async for e in fresh.events(run.run_id)]
        assert [event_to_json(e) for e in events] == stored
    finally:
        proxy.stop()
        sim.kill()
