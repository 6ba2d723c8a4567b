"""`check-backend`'s decision-trail checks (`GET /v1/proposals`): desk_sim passes them with a
decided proposal on its trail; a trail out of order, ignoring its filter and taking any
`since` fails each one by name."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ito_tui.client import ItoClient
from ito_tui.client.conformance_checks import check_backend
from ito_tui.contract import TrainingSpec
from tests.client import samples

from .brokenserver import CAPABILITIES

TRAIL_CHECKS = ("proposals.trail", "proposals.trail_status", "proposals.trail_invalid_since")
SPEC = TrainingSpec.model_validate(
    {
        "booking_id": "bk_h100_1n",
        "model_size": "150M",
        "data_ref": "hf://org/ds@main",
        "target_capability": "general-chat",
        "budget_usd": "5000",
    }
)


async def reject_one(url: str, token: str) -> str:
    async with ItoClient(url, token=SecretStr(token)) as client:
        run = await client.create_run(SPEC)
        async with asyncio.timeout(20):
            while True:
                if found := await client.all_proposals(run_id=run.run_id):
                    break
                await asyncio.sleep(0.02)
        return (await client.reject(found[0].proposal_id, comment="no")).proposal_id


async def test_desk_sim_passes_the_trail_checks(sim_factory: Callable[..., Any]) -> None:
    sim = sim_factory(scenario="loss-spike")
    await reject_one(sim.url, "hunter2")
    report = await check_backend(sim.url, SecretStr(sim.token))
    checks = {c.name: c for c in report.checks}
    assert report.failures == [], report.failures
    for name in TRAIL_CHECKS:
        assert checks[name].status.value == "pass", (name, checks[name].detail)
    assert checks["proposals.trail"].detail == "1 proposals for limit=5, newest first"
    assert checks["proposals.trail_status"].detail == "1 rejected proposals, all rejected"


def lying_trail() -> Starlette:
    caps = {**CAPABILITIES, "capabilities": [{"name": "proposals.read", "status": "available"}]}

    async def capabilities(request: Request) -> JSONResponse:
        return JSONResponse(caps)

    async def whoami(request: Request) -> JSONResponse:
        if request.headers.get("authorization") != "Bearer t0k":
            return JSONResponse(
                {"title": "no", "status": 401, "code": "auth.invalid"},
                401,
                media_type="application/problem+json",
            )
        return JSONResponse({"operator": "alice"})

    async def proposals(request: Request) -> JSONResponse:
        # Oldest first, the pending one under status=rejected, and any `since` taken.
        older = {**samples.proposal("prop_1"), "created_at": "2026-11-29T11:00:00.000Z"}
        return JSONResponse({"items": [older, samples.proposal("prop_2")], "next_cursor": None})

    return Starlette(
        routes=[
            Route("/v1/capabilities", capabilities),
            Route("/v1/whoami", whoami),
            Route("/v1/proposals", proposals),
        ]
    )


async def test_a_lying_trail_fails_each_check_by_name(serve_asgi: Callable[[Any], str]) -> None:
    report = await check_backend(serve_asgi(lying_trail()), SecretStr("t0k"))
    failed = {c.name: c.detail for c in report.checks if c.status.value == "fail"}
    assert "item 1 (prop_2) is newer than item 0" in failed["proposals.trail"]
    assert "status=rejected listed prop_1, pending" in failed["proposals.trail_status"]
    assert "expected HTTP 400, got 200" in failed["proposals.trail_invalid_since"]
