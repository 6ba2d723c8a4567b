"""`ItoClient.log_page` checks its answer against the question, and `telemetry(metrics=)`
asks for each open metric and keeps only those.

The scripted server answers pages that are out of order, reach past `before_seq`, hold
more than `limit` lines, lines of another rank, or a `next_before_seq` that pages
forwards: each is a ProtocolError naming the field, never shown as scrollback.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, ProtocolError
from tests.tui import pipeline_fakes

from .conftest import TS
from .fakeserver import Conn, FakeServer, Received
from .logsrv import line_body
from .test_logs_sim import finished_run

PAGE = "/v1/runs/run_1/logs/page"


def serve_page(server: FakeServer, seqs: list[int], next_before: int | None, **fields: Any) -> None:
    @server.route("GET", PAGE)
    async def _(req: Received, conn: Conn) -> None:
        items = [line_body(s, **fields) for s in seqs]
        await conn.json(200, {"items": items, "next_before_seq": next_before})


async def test_a_page_in_order_before_the_seq_asked_is_returned(
    server: FakeServer, client: ItoClient
) -> None:
    serve_page(server, [3, 4, 7], 3, level="error")
    page = await client.log_page("run_1", before_seq=8, limit=3, ranks=[0, 1, 3], level="error")
    assert [line.seq for line in page.items] == [3, 4, 7]
    assert page.next_before_seq == 3
    (asked,) = server.requests("GET", PAGE)
    assert asked.query == {
        "before_seq": ["8"],
        "limit": ["3"],
        "rank": ["0", "1", "3"],
        "level": ["error"],
    }


@pytest.mark.parametrize(
    ("seqs", "next_before", "field", "message"),
    [
        ([4, 3, 7], None, "items.1.seq", "oldest first"),
        ([5, 5], None, "items.1.seq", "oldest first"),
        ([6, 8], None, "items.1.seq", "before 8"),
        ([1, 2, 3, 5, 6], None, "items", "at most 4"),
        ([5, 6], 6, "next_before_seq", "page forwards"),
    ],
)
async def test_a_page_that_is_not_the_answer_asked_for_is_a_protocol_error(
    server: FakeServer,
    client: ItoClient,
    seqs: list[int],
    next_before: int | None,
    field: str,
    message: str,
) -> None:
    serve_page(server, seqs, next_before)
    with pytest.raises(ProtocolError, match=message) as caught:
        await client.log_page("run_1", before_seq=8, limit=4)
    assert caught.value.field == field


async def test_a_line_of_another_rank_or_source_in_a_filtered_page_is_refused(
    server: FakeServer, client: ItoClient
) -> None:
    serve_page(server, [2, 6], None)  # ranks 2 and 2, source trainer
    with pytest.raises(ProtocolError, match="source 'trainer'"):
        await client.log_page("run_1", ranks=[2], sources=["nccl"])
    with pytest.raises(ProtocolError, match="rank 2, asked for rank 1"):
        await client.log_page("run_1", ranks=[1])


async def test_telemetry_asks_for_each_open_metric(server: FakeServer, client: ItoClient) -> None:
    @server.route("GET", "/v1/runs/run_1/telemetry")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"items": [], "next_since_seq": None})

    await client.telemetry("run_1", max_points=10, metrics=["grad_norm", "mfu(%)"])
    await client.telemetry("run_1")
    with_metrics, without = server.requests("GET", "/v1/runs/run_1/telemetry")
    assert with_metrics.query == {"max_points": ["10"], "metric": ["grad_norm", "mfu(%)"]}
    assert "metric" not in without.query


async def test_open_metrics_not_asked_for_are_left_out(
    server: FakeServer, client: ItoClient
) -> None:
    metrics = {"grad_norm": 0.8, "lr": 3e-4, "loss_metrics/global_max_loss": "NaN"}
    sample = {**pipeline_fakes.sample(3, 10, TS, 3.2), "metrics": metrics}

    @server.route("GET", "/v1/runs/run_1/telemetry")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"items": [sample, {**sample, "seq": 4, "metrics": {}}]})

    page = await client.telemetry("run_1", metrics=["grad_norm", "loss_metrics/global_max_loss"])
    first, second = page.items
    assert set(first.metrics) == {"grad_norm", "loss_metrics/global_max_loss"}
    assert math.isnan(first.metrics["loss_metrics/global_max_loss"] or 0.0)
    assert second.metrics == {}
    everything = await client.telemetry("run_1")
    assert set(everything.items[0].metrics) == set(metrics)


async def test_desk_sims_open_metrics_come_one_name_at_a_time(sim: Any) -> None:
    async with ItoClient(sim.url, token=SecretStr(sim.token), timeout=5.0) as client:
        run_id = await finished_run(client)
        everything = await client.telemetry(run_id, max_points=50)
        picked = await client.telemetry(run_id, max_points=50, metrics=["grad_norm"])
    names = {name for item in everything.items for name in item.metrics}
    assert {"grad_norm", "lr", "mfu(%)"} <= names
    assert picked.items and all(set(i.metrics) == {"grad_norm"} for i in picked.items)


async def test_a_cut_line_is_not_judged_by_q_its_match_may_be_in_the_part_cut(
    server: FakeServer, client: ItoClient
) -> None:
    serve_page(server, [3], None, text="Traceback (most recent call last): …", cut=True)
    page = await client.log_page("run_1", q="CUDA error")
    assert [line.seq for line in page.items] == [3]
    serve_page(server, [3], None, text="Traceback (most recent call last): …", cut=False)
    with pytest.raises(ProtocolError, match="text without 'CUDA error'"):
        await client.log_page("run_1", q="CUDA error")
