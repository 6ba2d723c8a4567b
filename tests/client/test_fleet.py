"""`ItoClient.fleet`: the fleet snapshot, validated, its row keys unique; 501 when absent.

Against a scripted server (what desk_sim never sends) and desk_sim itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import CapabilityMissing, ItoClient, NotFound, ProtocolError

from . import samples
from .fakeserver import Conn, FakeServer, Received
from .logsrv import offering
from .test_logs_sim import start_run

FLEET = "/v1/runs/run_1/fleet"


def node(hostname: str, replica: str = "r0", gpus: int = 8) -> dict[str, Any]:
    return {
        "hostname": hostname,
        "replica_id": replica,
        "state": "healthy",
        "step_time_s_p50": 1.1,
        "step_time_s_p99": 1.3,
        "gpus": [{"index": i, "util_frac": 0.97, "temp_c": 71} for i in range(gpus)],
    }


def fleet(**changes: Any) -> dict[str, Any]:
    body = {
        "ts": samples.TS,
        "quorum": {"quorum_id": 7, "participants": 2, "min_replicas": 1, "age_s": 30},
        "replicas": [
            {"replica_id": "r0", "state": "healthy", "step": 120, "nodes": ["n-00"]},
            {"replica_id": "r1", "state": "recovering", "step": 118, "nodes": ["n-01"]},
        ],
        "nodes": [node("n-00"), node("n-01", "r1")],
    }
    return {**body, **changes}


def serve(server: FakeServer, body: dict[str, Any]) -> None:
    server.routes[("GET", "/v1/capabilities")] = offering("runs.fleet")

    @server.route("GET", FLEET)
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, body)


async def test_a_fleet_is_read_as_its_model(server: FakeServer, client: ItoClient) -> None:
    serve(server, fleet())
    answer = await client.fleet("run_1")
    assert answer.quorum.quorum_id == 7
    assert [n.hostname for n in answer.nodes] == ["n-00", "n-01"]
    assert len(answer.nodes[0].gpus) == 8


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (fleet(nodes=[node("n-00"), node("n-00")]), "nodes.1.hostname"),
        (
            fleet(replicas=[{"replica_id": "r0", "state": "lost", "step": 1}] * 2),
            "replicas.1.replica_id",
        ),
        (
            fleet(nodes=[{**node("n-00"), "gpus": [{"index": 3}, {"index": 3}]}]),
            "nodes.0.gpus.1.index",
        ),
    ],
)
async def test_a_fleet_listing_a_row_twice_is_a_protocol_error(
    server: FakeServer, client: ItoClient, body: dict[str, Any], field: str
) -> None:
    serve(server, body)
    with pytest.raises(ProtocolError, match="listed twice") as caught:
        await client.fleet("run_1")
    assert caught.value.field == field


async def test_a_fleet_that_is_not_a_fleet_is_a_protocol_error(
    server: FakeServer, client: ItoClient
) -> None:
    serve(server, {"ts": samples.TS, "nodes": []})  # no quorum
    with pytest.raises(ProtocolError):
        await client.fleet("run_1")


async def test_501_for_the_fleet_names_runs_fleet(server: FakeServer, client: ItoClient) -> None:
    server.routes[("GET", "/v1/capabilities")] = offering("runs.fleet")

    @server.route("GET", FLEET)
    async def _(req: Received, conn: Conn) -> None:
        await conn.problem(501, "capability.not_implemented", capability="runs.fleet")

    with pytest.raises(CapabilityMissing) as caught:
        await client.fleet("run_1")
    assert caught.value.capability == "runs.fleet"


async def test_desk_sims_fleet_reads_through_the_client(sim_factory: Callable[..., Any]) -> None:
    sim = sim_factory()
    async with ItoClient(sim.url, token=SecretStr(sim.token), timeout=5.0) as client:
        run_id = await start_run(client)
        answer = await client.fleet(run_id)
        with pytest.raises(NotFound):
            await client.fleet("run_does_not_exist")
    assert answer.nodes and all(len(node.gpus) == 8 for node in answer.nodes)
    replica_ids = {r.replica_id for r in answer.replicas}
    assert all(n.replica_id in replica_ids | {None} for n in answer.nodes)
    assert answer.quorum.participants <= len(answer.replicas)


async def test_a_scaffold_backend_offers_no_fleet(sim_factory: Callable[..., Any]) -> None:
    sim = sim_factory(mode="scaffold")
    async with ItoClient(sim.url, token=SecretStr(sim.token), timeout=5.0) as client:
        with pytest.raises(CapabilityMissing) as caught:
            await client.fleet("run_x")
    assert caught.value.capability == "runs.fleet"
