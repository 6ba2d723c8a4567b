"""ItoClient against the hostile loopback server: typed results, error mapping, headers."""

from __future__ import annotations

import json
import uuid

import pytest

from ito_tui import __version__
from ito_tui.client import (
    AuthError,
    BackendUnavailable,
    CapabilityMissing,
    Conflict,
    Forbidden,
    ItoClient,
    ItoError,
    NotFound,
    RateLimited,
    Refused,
    ValidationFailed,
)
from ito_tui.contract import Booking, Proposal, Run, TrainingSpec, WhoAmI

from . import samples
from .conftest import TOKEN, make_client
from .fakeserver import Conn, FakeServer, Received, capabilities_body

SPEC = TrainingSpec.model_validate(samples.SPEC)


async def test_whoami_sends_bearer_token_and_user_agent(
    server: FakeServer, client: ItoClient
) -> None:
    @server.route("GET", "/v1/whoami")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"operator": "alice", "extra": "ignored"})

    me = await client.whoami()
    assert me == WhoAmI(operator="alice")
    (req,) = server.requests("GET", "/v1/whoami")
    assert req.headers["authorization"] == f"Bearer {TOKEN}"
    assert req.headers["user-agent"] == f"ito-tui/{__version__}"


async def test_token_callable_is_asked_per_request(server: FakeServer) -> None:
    from pydantic import SecretStr

    tokens = iter(["first", "second"])

    @server.route("GET", "/v1/whoami")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"operator": "alice"})

    async with make_client(server.url, token=lambda: SecretStr(next(tokens))) as c:
        await c.whoami()
        await c.whoami()
    got = [r.headers["authorization"] for r in server.requests("GET", "/v1/whoami")]
    assert got == ["Bearer first", "Bearer second"]


async def test_no_token_sends_no_authorization(server: FakeServer) -> None:
    @server.route("GET", "/v1/whoami")
    async def _(req: Received, conn: Conn) -> None:
        await conn.problem(401, "auth.invalid", "Not authenticated")

    async with make_client(server.url, token=None) as c:
        with pytest.raises(AuthError):
            await c.whoami()
    assert "authorization" not in server.requests("GET", "/v1/whoami")[0].headers


async def test_bookings_follow_cursor_pages(server: FakeServer, client: ItoClient) -> None:
    @server.route("GET", "/v1/bookings")
    async def _(req: Received, conn: Conn) -> None:
        if req.query.get("cursor") == ["c2"]:
            await conn.json(200, {"items": [samples.booking("bk_2")], "next_cursor": None})
        else:
            await conn.json(200, {"items": [samples.booking("bk_1")], "next_cursor": "c2"})

    got = await client.bookings(status="completed")
    assert [b.booking_id for b in got] == ["bk_1", "bk_2"]
    assert all(isinstance(b, Booking) for b in got)
    first, second = server.requests("GET", "/v1/bookings")
    assert first.query["status"] == ["completed"] and "cursor" not in first.query
    assert second.query["cursor"] == ["c2"]
    assert [b.booking_id for b in await client.bookings(all_pages=False)] == ["bk_1"]


async def test_cursor_loop_is_a_protocol_error(server: FakeServer, client: ItoClient) -> None:
    from ito_tui.client import ProtocolError

    @server.route("GET", "/v1/runs")
    async def _(req: Received, conn: Conn) -> None:
        await conn.json(200, {"items": [samples.run_summary()], "next_cursor": "same"})

    with pytest.raises(ProtocolError) as info:
        await client.runs()
    assert info.value.field == "next_cursor"
    assert len(server.requests("GET", "/v1/runs")) == 2


async def test_read_methods_hit_their_paths(server: FakeServer, client: ItoClient) -> None:
    bodies = {
        "/v1/bookings/bk_1": samples.booking(),
        "/v1/runs": {"items": [samples.run_summary()], "next_cursor": None},
        "/v1/runs/run_1": samples.run(),
        "/v1/runs/run_1/telemetry": {"items": [], "next_since_seq": 7},
        "/v1/runs/run_1/checkpoints": [samples.checkpoint()],
        "/v1/runs/run_1/proposals": [samples.proposal()],
    }
    for path, body in bodies.items():

        async def handler(req: Received, conn: Conn, body: object = body) -> None:
            await conn.json(200, body)

        server.routes[("GET", path)] = handler

    assert (await client.booking("bk_1")).booking_id == "bk_1"
    assert [r.run_id for r in await client.runs(state="running", booking_id="bk_1")] == ["run_1"]
    assert isinstance(await client.run("run_1"), Run)
    assert (await client.telemetry("run_1", since_seq=5, max_points=10)).next_since_seq == 7
    assert (await client.checkpoints("run_1"))[0].checkpoint_id == "ckpt_1"
    assert (await client.proposals("run_1", status="pending"))[0].proposal_id == "prop_1"
    (runs_req,) = server.requests("GET", "/v1/runs")
    assert runs_req.query["state"] == ["running"] and runs_req.query["booking_id"] == ["bk_1"]
    (tel,) = server.requests("GET", "/v1/runs/run_1/telemetry")
    assert tel.query == {"since_seq": ["5"], "max_points": ["10"]}
    (props,) = server.requests("GET", "/v1/runs/run_1/proposals")
    assert props.query == {"status": ["pending"]}


async def test_ids_cannot_add_path_segments(server: FakeServer, client: ItoClient) -> None:
    with pytest.raises(NotFound):
        await client.run("../bookings?x=1")
    (req,) = [r for r in server.received if r.path != "/v1/capabilities"]
    assert req.path == "/v1/runs/..%2Fbookings%3Fx%3D1"


async def test_writes_send_bodies_and_fresh_idempotency_keys(
    server: FakeServer, client: ItoClient
) -> None:
    routes = {
        "/v1/estimates": (200, samples.estimate()),
        "/v1/runs": (202, samples.run()),
        "/v1/proposals/prop_1/approve": (200, samples.proposal(status="approved")),
        "/v1/proposals/prop_1/reject": (200, samples.proposal(status="rejected")),
        "/v1/runs/run_1/cancel": (202, samples.run(state="cancelling")),
        "/v1/sim/runs/run_1/inject": (202, {}),
    }
    for path, (status, body) in routes.items():

        async def handler(req: Received, conn: Conn, s: int = status, b: object = body) -> None:
            await conn.json(s, b)

        server.routes[("POST", path)] = handler

    assert (await client.estimate(SPEC)).fits_budget
    run = await client.create_run(SPEC)
    assert run.run_id == "run_1"
    assert (await client.approve("prop_1", comment="ok")).status == "approved"
    assert (await client.reject("prop_1", idempotency_key="k-given")).status == "rejected"
    assert (await client.cancel_run("run_1", reason="stop")).state == "cancelling"
    assert await client.inject("run_1", "node_failure", {"node": "n1"}) is None

    (create,) = server.requests("POST", "/v1/runs")
    assert uuid.UUID(create.headers["idempotency-key"]).version == 4
    assert json.loads(create.body)["model_size"] == "8B"
    assert create.headers["content-type"] == "application/json"
    (approve,) = server.requests("POST", "/v1/proposals/prop_1/approve")
    assert json.loads(approve.body) == {"comment": "ok"}
    (reject,) = server.requests("POST", "/v1/proposals/prop_1/reject")
    assert reject.headers["idempotency-key"] == "k-given" and json.loads(reject.body) == {}
    (cancel,) = server.requests("POST", "/v1/runs/run_1/cancel")
    assert json.loads(cancel.body) == {"reason": "stop"} and "idempotency-key" in cancel.headers
    (inject,) = server.requests("POST", "/v1/sim/runs/run_1/inject")
    assert "idempotency-key" not in inject.headers
    assert json.loads(inject.body) == {"kind": "node_failure", "params": {"node": "n1"}}


async def test_invalid_inject_kind_is_refused_locally(
    server: FakeServer, client: ItoClient
) -> None:
    with pytest.raises(ValidationFailed):
        await client.inject("run_1", "rm -rf")
    assert not server.requests("POST", "/v1/sim/runs/run_1/inject")


@pytest.mark.parametrize(
    ("status", "code", "extra", "cls"),
    [
        (400, "idempotency.key_missing", {}, ValidationFailed),
        (401, "auth.invalid", {}, AuthError),
        (403, "booking.forbidden", {}, Forbidden),
        (404, "run.not_found", {}, NotFound),
        (409, "run.terminal", {}, Conflict),
        (
            422,
            "validation.failed",
            {"errors": [{"loc": ["body", "seq_len"], "msg": "bad"}]},
            ValidationFailed,
        ),
        (
            422,
            "run.refused",
            {"refusals": [{"code": "memory.does_not_fit", "reason": "OOM"}]},
            Refused,
        ),
        (501, "capability.not_implemented", {"capability": "runs.create"}, CapabilityMissing),
    ],
)
async def test_problem_json_maps_to_typed_error_without_retry(
    server: FakeServer,
    client: ItoClient,
    status: int,
    code: str,
    extra: dict[str, object],
    cls: type[ItoError],
) -> None:
    @server.route("POST", "/v1/runs")
    async def _(req: Received, conn: Conn) -> None:
        await conn.problem(
            status,
            code,
            "Title here",
            detail="Detail here",
            request_id="req_9",
            headers={"X-Request-Id": "req_9"},
            **extra,
        )

    with pytest.raises(cls) as info:
        await client.create_run(SPEC)
    err = info.value
    assert type(err) is cls
    assert str(err) == "Title here: Detail here"
    assert err.status == status and err.code == code and err.request_id == "req_9"
    assert err.endpoint == "POST /v1/runs"
    assert len(server.requests("POST", "/v1/runs")) == 1, "4xx and 501 are never retried"
    if isinstance(err, ValidationFailed) and status == 422:
        assert err.errors[0].loc == ["body", "seq_len"]
    if isinstance(err, Refused):
        assert err.refusals[0].code == "memory.does_not_fit"
    if isinstance(err, CapabilityMissing):
        assert err.capability == "runs.create"


async def test_conflict_carries_the_decided_proposal(server: FakeServer, client: ItoClient) -> None:
    decided = samples.proposal(status="rejected") | {"decided_by": "bob"}

    @server.route("POST", "/v1/proposals/prop_1/approve")
    async def _(req: Received, conn: Conn) -> None:
        await conn.problem(409, "proposal.already_decided", "Already decided", current=decided)

    with pytest.raises(Conflict) as info:
        await client.approve("prop_1")
    assert isinstance(info.value.current, Proposal)
    assert info.value.current.decided_by == "bob"


async def test_error_without_problem_body_still_typed(
    server: FakeServer, client: ItoClient
) -> None:
    @server.route("GET", "/v1/runs/run_1")
    async def _(req: Received, conn: Conn) -> None:
        await conn.send(404, b"<html>nope</html>", content_type="text/html")

    with pytest.raises(NotFound) as info:
        await client.run("run_1")
    assert info.value.problem is None and "404" in str(info.value)


async def test_501_without_capability_member_names_the_endpoint_capability(
    server: FakeServer, client: ItoClient
) -> None:
    @server.route("POST", "/v1/runs")
    async def _(req: Received, conn: Conn) -> None:
        await conn.send(501, b"", content_type=None)

    with pytest.raises(CapabilityMissing) as info:
        await client.create_run(SPEC)
    assert info.value.capability == "runs.create"
    assert len(server.requests("POST", "/v1/runs")) == 1


async def test_capabilities_cached_until_refresh(server: FakeServer, client: ItoClient) -> None:
    caps = await client.capabilities()
    assert caps.has("runs.create")
    await client.capabilities()
    await client.require("runs.read")
    assert len(server.requests("GET", "/v1/capabilities")) == 1
    await client.capabilities(refresh=True)
    assert len(server.requests("GET", "/v1/capabilities")) == 2


async def test_missing_capability_stops_before_the_call(server: FakeServer) -> None:
    async def caps(req: Received, conn: Conn) -> None:
        await conn.json(200, capabilities_body(missing=("runs.create",), mode="scaffold"))

    server.routes[("GET", "/v1/capabilities")] = caps
    async with make_client(server.url) as c:
        with pytest.raises(CapabilityMissing) as info:
            await c.create_run(SPEC)
        assert info.value.capability == "runs.create"
        assert "runs.create" in str(info.value)
        with pytest.raises(CapabilityMissing):
            await c.require("no.such.capability")
        await c.require("runs.read")
    assert not server.requests("POST", "/v1/runs")


async def test_connection_refused_is_backend_unavailable() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with make_client(f"http://127.0.0.1:{port}") as c:
        with pytest.raises(BackendUnavailable) as info:
            await c.whoami()
    assert info.value.status is None
    assert TOKEN not in str(info.value)


async def test_429_gives_rate_limited_after_bounded_attempts(
    server: FakeServer, client: ItoClient
) -> None:
    @server.route("GET", "/v1/runs/run_1")
    async def _(req: Received, conn: Conn) -> None:
        await conn.problem(429, "rate_limited", "Slow down", headers={"Retry-After": "0"})

    with pytest.raises(RateLimited) as info:
        await client.run("run_1")
    assert info.value.retry_after == 0.0
    assert len(server.requests("GET", "/v1/runs/run_1")) == 4
