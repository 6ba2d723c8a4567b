"""A backend that ignores `from_step`/`to_step` answers another question: both telemetry
reads of the client say so (ProtocolError naming the range), and pass an honest answer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, ProtocolError, RetryPolicy
from tests.client.fakeserver import Conn, FakeServer, Received
from tests.tui import pipeline_fakes

pytestmark = pytest.mark.faults

AT = datetime(2026, 11, 29, tzinfo=UTC)


def serve(steps: list[int]) -> FakeServer:
    """Answers every telemetry request with samples at `steps`, whatever it asked."""
    server = FakeServer().start()

    async def telemetry(req: Received, conn: Conn) -> None:
        items = [pipeline_fakes.sample(k + 1, step, AT, 3.0) for k, step in enumerate(steps)]
        await conn.json(200, {"items": items, "next_since_seq": len(items)})

    server.routes[("GET", "/v1/runs/run_1/telemetry")] = telemetry
    return server


@pytest.mark.parametrize(
    ("steps", "asked", "says"),
    [
        (
            [10, 20, 30],
            {"from_step": 15, "to_step": 25},
            "item 0 has step 10, asked for steps 15..25",
        ),
        ([10, 20, 30], {"from_step": 15}, "item 0 has step 10, asked for steps 15.."),
        ([10, 20, 30], {"to_step": 20}, "item 2 has step 30, asked for steps ..20"),
    ],
)
async def test_items_outside_the_range_are_a_protocol_error(
    steps: list[int], asked: dict[str, Any], says: str
) -> None:
    server = serve(steps)
    try:
        async with ItoClient(
            server.url, token=SecretStr("tok-range-2"), retry=RetryPolicy(max_attempts=1)
        ) as client:
            for read in (client.telemetry, client.telemetry_dicts):
                with pytest.raises(ProtocolError, match=says) as caught:
                    await read("run_1", **asked)
                assert caught.value.field is not None and caught.value.field.endswith(".step")
            query = next(r.query for r in server.received if r.path.endswith("/telemetry"))
            assert {k: int(v[0]) for k, v in query.items() if k in asked} == asked
    finally:
        server.stop()


async def test_an_answer_inside_the_range_passes() -> None:
    server = serve([15, 20, 20, 25])  # a rewound step twice
    try:
        async with ItoClient(server.url, token=SecretStr("tok-range-3")) as client:
            page = await client.telemetry("run_1", from_step=15, to_step=25)
            assert [s.step for s in page.items] == [15, 20, 20, 25]
            dicts = await client.telemetry_dicts("run_1", from_step=15, to_step=25)
            assert [s["step"] for s in dicts["items"]] == [15, 20, 20, 25]
    finally:
        server.stop()
