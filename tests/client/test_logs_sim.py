"""`ItoClient.logs` and `log_page` against desk_sim on 127.0.0.1 (H1's job log routes).

One finished run's log is the reference: read back to its start through the page
endpoint, then compared with what the stream replays with and without filters, from a
resume point, and past the end (204). A live run is followed through a proxy that
resets every connection now and then: every line once, in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import CapabilityMissing, ItoClient, RetryPolicy, StreamPolicy
from ito_tui.client.loglines import LogQuery
from ito_tui.contract import LogLine, LogTruncated, TrainingSpec
from ito_tui.desk_sim import create_app
from tests.simproc import SimProcess
from tests.support.servers import TOKENS, ServerThread, sim_config

from .tcpproxy import TcpProxy
from .test_desk_sim import free_port

pytestmark = pytest.mark.slow

RETRY = RetryPolicy(max_attempts=3, backoff_base_s=0.02, backoff_max_s=0.1)
STREAM = StreamPolicy(reconnect_base_s=0.02, reconnect_floor_s=0.02, reconnect_max_s=0.2)


def connect(url: str) -> ItoClient:
    token = SecretStr(next(iter(TOKENS)))
    return ItoClient(url, token=token, timeout=5.0, retry=RETRY, stream=STREAM)


async def start_run(client: ItoClient) -> str:
    (booking, *_) = await client.bookings(status="completed")
    spec = TrainingSpec.model_validate(
        {
            "booking_id": booking.booking_id,
            "model_size": "150M",
            "data_ref": "catalog://fineweb-edu@1.3",
            "target_capability": "general",
            "budget_usd": "30000",
        }
    )
    return (await client.create_run(spec)).run_id


async def finished_run(client: ItoClient) -> str:
    run_id = await start_run(client)
    async for event in client.events(run_id):
        if event.terminal:
            break
    return run_id


async def whole_log(client: ItoClient, run_id: str, **filters: Any) -> list[LogLine]:
    """Every line, read backwards page by page (the page endpoint's own walk)."""
    pages: list[list[LogLine]] = []
    before: int | None = None
    for _ in range(10_000):
        page = await client.log_page(run_id, before_seq=before, limit=97, **filters)
        pages.append(page.items)
        if page.next_before_seq is None:
            break
        before = page.next_before_seq
    return [line for items in reversed(pages) for line in items]


async def streamed(stream: AsyncIterator[LogLine | LogTruncated]) -> list[LogLine]:
    out: list[LogLine] = []
    async for item in stream:
        assert isinstance(item, LogLine), item
        out.append(item)
    return out


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """One finished run on a desk_sim of this module: (url, run id)."""
    server = ServerThread(create_app(sim_config(tmp_path_factory.mktemp("logs") / "sim.db")))
    url = f"http://127.0.0.1:{server.start()}"

    async def make() -> str:
        async with connect(url) as client:
            return await finished_run(client)

    try:
        yield url, asyncio.run(make())
    finally:
        server.stop()


async def test_the_page_walk_has_every_line_once_oldest_first(finished: tuple[str, str]) -> None:
    url, run_id = finished
    async with connect(url) as client:
        lines = await whole_log(client, run_id)
    seqs = [line.seq for line in lines]
    assert len(seqs) > 100
    assert seqs == sorted(set(seqs))
    assert any(line.source == "trainer" and "loss:" in line.text for line in lines)


async def test_the_stream_replays_its_tail_and_ends_with_the_run(
    finished: tuple[str, str],
) -> None:
    url, run_id = finished
    async with connect(url) as client:
        everything = await whole_log(client, run_id)
        tail = await streamed(client.logs(run_id, tail=50))
    assert tail == everything[-50:]


@pytest.mark.parametrize(
    "filters",
    [{"level": "warning"}, {"ranks": [0]}, {"sources": ["checkpoint", "torchft"]}, {"q": "LOSS"}],
)
async def test_filters_on_the_stream_and_the_page_match_the_whole_log_filtered(
    finished: tuple[str, str], filters: dict[str, Any]
) -> None:
    url, run_id = finished
    async with connect(url) as client:
        everything = await whole_log(client, run_id)
        query = LogQuery.of(**filters)
        expected = [line for line in everything if query.mismatch(line) is None]
        assert expected, f"the run's log has no line for {filters}"
        assert len(expected) < len(everything)
        paged = await whole_log(client, run_id, **filters)
        replayed = await streamed(client.logs(run_id, tail=100_000, **filters))
    assert paged == expected
    assert replayed == expected


async def test_a_resume_gets_exactly_the_lines_after_it_and_past_the_end_nothing(
    finished: tuple[str, str],
) -> None:
    url, run_id = finished
    async with connect(url) as client:
        everything = await whole_log(client, run_id)
        middle = everything[len(everything) // 2].seq
        after = await streamed(client.logs(run_id, since_seq=middle))
        past_end = await streamed(client.logs(run_id, since_seq=everything[-1].seq))
    assert after == [line for line in everything if line.seq > middle]
    assert past_end == []


async def test_a_live_log_through_resets_has_every_line_once_in_order(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(speed=20_000.0)
    port = int(sim.url.rsplit(":", 1)[1])
    proxy = TcpProxy(port).start()
    try:
        async with connect(proxy.url) as client:
            run_id = await start_run(client)
            stream = client.logs(run_id, tail=0)
            got: list[LogLine] = []
            async for item in stream:
                assert isinstance(item, LogLine)
                got.append(item)
                if len(got) % 40 == 0:
                    proxy.drop_all()
            reference = await whole_log(client, run_id)
    finally:
        proxy.stop()
    seqs = [line.seq for line in got]
    assert seqs == sorted(set(seqs))
    assert stream.state.reconnects >= 2
    assert got == [line for line in reference if line.seq >= got[0].seq]


async def test_a_scaffold_backend_offers_no_logs_and_is_never_asked(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(mode="scaffold")
    async with connect(sim.url) as client:
        with pytest.raises(CapabilityMissing) as streamed_:
            await client.logs("run_x")
        with pytest.raises(CapabilityMissing) as paged:
            await client.log_page("run_x")
    assert streamed_.value.capability == paged.value.capability == "runs.logs"


@pytest.mark.faults
async def test_sigkill_restarts_mid_run_lose_and_repeat_no_log_line(tmp_path: Path) -> None:
    """SIGKILL the backend twice while following its log: every line once, as stored."""
    port = free_port()
    sim = SimProcess(tmp_path / "sim.db", port=port, speed=3000, scenario="happy", heartbeat=0.5)
    sim.start()
    try:
        async with connect(sim.url) as client:
            run_id = await start_run(client)
            got: list[LogLine] = []
            stream = client.logs(run_id, since_seq=0)

            async def follow() -> None:
                async for item in stream:
                    assert isinstance(item, LogLine)
                    got.append(item)

            follower = asyncio.create_task(follow())
            kills = 0
            while not follower.done() and kills < 2:
                await asyncio.sleep(0.5)
                if got and not follower.done():
                    await asyncio.to_thread(sim.restart)
                    kills += 1
            async with asyncio.timeout(60):
                await follower
            assert kills == 2, "the run ended before the backend could be killed twice"
            assert stream.state.reconnects >= 2
            stored = await whole_log(client, run_id)
    finally:
        sim.kill()
    assert [line.seq for line in got] == [line.seq for line in stored]
    assert got == stored
