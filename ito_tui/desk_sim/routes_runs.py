"""Routes for runs: create, list, get, cancel, telemetry, checkpoints, proposals, inject."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import StringConstraints

from ito_tui.contract import (
    CancelRequest,
    Checkpoint,
    Decision,
    InjectRequest,
    Page,
    Proposal,
    ProposalStatus,
    Run,
    RunStateName,
    RunSummary,
    TelemetryPage,
    TrainingSpec,
    now_utc,
)

from .engine import DecisionError, Engine
from .guards import DeskDep, Operator, Receipt, idempotent
from .problems import ApiError
from .routes_desk import Cursor, Limit, decode_cursor, encode_cursor, ok, preflight, scenario_of
from .runtime import Desk
from .telemetry import MAX_METRICS, MAX_POINTS_LIMIT, telemetry_page

router = APIRouter(tags=["runs"])

IdemKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", description="Required: a UUID; same key + body replays."),
]


def run_json(snapshot: str) -> dict[str, Any]:
    return Run.model_validate_json(snapshot).model_dump(mode="json")


def summary_of(run: dict[str, Any]) -> dict[str, Any]:
    current = run.get("current_stage")
    frac = None
    for stage in run["stages"]:
        if stage["name"] == current and stage.get("progress"):
            frac = stage["progress"]["frac"]
    return RunSummary.model_validate(
        {
            **run,
            "stage_progress_frac": frac,
            "model_size": run["spec"]["model_size"],
        }
    ).model_dump(mode="json")


async def runs_create_wired(desk: DeskDep) -> None:
    """In scaffold mode `runs.create` is not wired: 501 before the body is even validated.

    A dependency rather than a check in the handler, because FastAPI solves
    dependencies before it validates the body: a scaffold backend must say 501
    whatever it was sent, as the real scaffold does (API.md, "not wired yet").
    """
    if desk.config.mode == "scaffold":
        raise ApiError(
            "capability.not_implemented",
            "starting runs is not wired on this backend yet",
            capability="runs.create",
        )


def live_engine(desk: Desk, run_id: str) -> Engine:
    engine = desk.engine(run_id)
    if engine is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    return engine


@router.post("/v1/runs", response_model=Run, status_code=202)
async def create_run(
    request: Request,
    desk: DeskDep,
    operator: Operator,
    _wired: Annotated[None, Depends(runs_create_wired)],
    spec: TrainingSpec,
    _key: IdemKey = None,
) -> Response:
    """Pre-flight the spec and start a run on a completed booking (202 + `Location`)."""

    async def action(receipt: Receipt) -> Response:
        booking = desk.booking(spec.booking_id)
        if booking is None:
            raise ApiError("booking.not_found", f"no booking {spec.booking_id}")
        if str(booking.status) != "completed":
            raise ApiError(
                "booking.not_active",
                f"booking {booking.booking_id} is {booking.status}; only completed "
                "bookings can take a run",
            )
        scenario = scenario_of(desk, spec)
        if desk.config.preflight_delay_s:
            await asyncio.sleep(desk.config.preflight_delay_s)
        busy = desk.store.active_run_by_booking().get(booking.booking_id)
        if busy is not None:
            raise ApiError("booking.busy", f"booking {booking.booking_id} is running {busy}")
        estimate = preflight(desk, spec, booking)
        if estimate.refusals:
            raise ApiError(
                "run.refused",
                "; ".join(r.reason for r in estimate.refusals),
                refusals=[r.model_dump(mode="json") for r in estimate.refusals],
            )
        sim = spec.sim
        engine = Engine.create(
            run_id="run_" + secrets.token_hex(6),
            spec=spec,
            booking=booking,
            estimate=estimate,
            operator=operator,
            scenario=scenario,
            seed=sim.seed if sim and sim.seed is not None else desk.config.seed,
            speed=sim.time_scale if sim and sim.time_scale else desk.config.speed,
            approval_speed=desk.config.approval_speed,
            ttl_s=desk.config.proposal_ttl_s,
            now=now_utc(),
        )
        run_id = engine.run["run_id"]
        location = {"Location": f"/v1/runs/{run_id}"}
        response = ok(run_json(json.dumps(engine.run)), 202, headers=location)
        # The run and the key's stored response commit together (exactly once across a kill).
        desk.add(engine, operator, also=receipt.saver(response))
        return response

    return await idempotent(request, desk, operator, action)


@router.get("/v1/runs", response_model=Page[RunSummary])
async def list_runs(
    desk: DeskDep,
    _operator: Operator,
    state: Annotated[RunStateName | None, Query()] = None,
    booking_id: Annotated[str | None, Query(max_length=200)] = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> JSONResponse:
    """Runs, newest first."""
    after = decode_cursor(cursor, "r")
    rows = desk.store.list_runs(
        state=state.value if state else None, booking_id=booking_id, after=after, limit=limit + 1
    )
    items = [
        summary_of(json.loads(desk.snapshot(json.loads(s)["run_id"]) or s))
        for _r, s in rows[:limit]
    ]
    nxt = encode_cursor({"r": rows[limit - 1][0]}) if len(rows) > limit else None
    return ok({"items": items, "next_cursor": nxt})


@router.get("/v1/runs/{run_id}", response_model=Run)
async def get_run(run_id: str, desk: DeskDep, _operator: Operator) -> JSONResponse:
    """The full run snapshot; `last_event_seq` says which events it already reflects."""
    snapshot = desk.snapshot(run_id)
    if snapshot is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    return ok(run_json(snapshot))


@router.post("/v1/runs/{run_id}/cancel", response_model=Run, status_code=202)
async def cancel_run(
    request: Request,
    run_id: str,
    desk: DeskDep,
    operator: Operator,
    body: Annotated[CancelRequest | None, Body()] = None,
    _key: IdemKey = None,
) -> Response:
    """Cancel a run (202: it passes through `cancelling`); 409 `run.terminal` if it ended."""

    async def action(receipt: Receipt) -> Response:
        engine = live_engine(desk, run_id)
        if engine.done:
            raise ApiError("run.terminal", f"run {run_id} already {engine.state}")
        reason = body.reason if body and body.reason else f"cancelled by {operator}"
        engine.cancel(reason, now_utc())
        response = ok(run_json(json.dumps(engine.run)), 202)
        desk.commit(engine, also=receipt.saver(response))
        return response

    return await idempotent(request, desk, operator, action)


@router.get("/v1/runs/{run_id}/telemetry", response_model=TelemetryPage)
async def telemetry(
    run_id: str,
    desk: DeskDep,
    _operator: Operator,
    since_seq: Annotated[int, Query(ge=0, le=2**53)] = 0,
    max_points: Annotated[int | None, Query(ge=2, le=MAX_POINTS_LIMIT)] = None,
    metric: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] | None,
        Query(description="An open metric's name (repeatable): items carry only these."),
    ] = None,
    from_step: Annotated[
        int | None,
        Query(ge=0, le=2**53, description="Only samples with step >= this (inclusive)."),
    ] = None,
    to_step: Annotated[
        int | None,
        Query(ge=0, le=2**53, description="Only samples with step <= this (inclusive)."),
    ] = None,
) -> Response:
    """Samples after `since_seq`; with `max_points`, min/max-preserving downsampling.

    Without `max_points` at most 1000 raw samples come back; pass `next_since_seq`
    to get the next ones. With `metric=` (repeatable, at most 16) each item's `metrics`
    holds only those names, and downsampling keeps each one's min and max per bucket
    and the last sample too. `from_step`/`to_step` (inclusive, each optional; `to_step`
    below `from_step` is a 400 `request.invalid`) keep only the samples of those steps,
    before paging and downsampling (which then buckets that range): a rewound run's
    repeated steps give two samples per step there, both kept, in seq order.
    """
    if from_step is not None and to_step is not None and to_step < from_step:
        raise ApiError(
            "request.invalid",
            f"to_step {to_step} is below from_step {from_step}",
            errors=[{"loc": ["query", "to_step"], "msg": "must be at least from_step"}],
        )
    if desk.snapshot(run_id) is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    names = metric or []
    if len(set(names)) > MAX_METRICS:
        raise ApiError(
            "validation.failed",
            f"at most {MAX_METRICS} metric= names per request ({len(set(names))} asked)",
            errors=[{"loc": ["query", "metric"], "msg": f"at most {MAX_METRICS} names"}],
        )
    steps = (from_step, to_step)
    bodies, nxt = telemetry_page(desk.store.conn, run_id, since_seq, max_points, names, steps)
    # Sample bodies are stored as validated JSON; splice them instead of re-encoding.
    content = '{"items":[' + ",".join(bodies) + '],"next_since_seq":' + json.dumps(nxt) + "}"
    return Response(content, media_type="application/json")


@router.get("/v1/runs/{run_id}/checkpoints", response_model=list[Checkpoint])
async def checkpoints(run_id: str, desk: DeskDep, _operator: Operator) -> JSONResponse:
    if desk.snapshot(run_id) is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    return ok([json.loads(b) for b in desk.store.checkpoints(run_id)])


@router.get("/v1/runs/{run_id}/proposals", response_model=list[Proposal], tags=["proposals"])
async def proposals(
    run_id: str,
    desk: DeskDep,
    _operator: Operator,
    status: Annotated[ProposalStatus | None, Query()] = None,
) -> JSONResponse:
    if desk.snapshot(run_id) is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    rows = desk.store.proposals(run_id, status.value if status else None)
    return ok([json.loads(b) for b in rows])


async def decide(
    request: Request,
    desk: Desk,
    operator: str,
    proposal_id: str,
    body: Decision | None,
    *,
    approve: bool,
) -> Response:
    async def action(receipt: Receipt) -> Response:
        found = desk.store.proposal(proposal_id)
        if found is None:
            raise ApiError("proposal.not_found", f"no proposal {proposal_id}")
        run_id, current = found
        engine = live_engine(desk, run_id)
        try:
            decided = engine.decide(
                proposal_id,
                approve=approve,
                operator=operator,
                comment=body.comment if body else None,
                now=now_utc(),
            )
        except DecisionError as exc:
            raise ApiError(exc.code, exc.detail, current=json.loads(current)) from None
        response = ok(Proposal.model_validate(decided))
        desk.commit(engine, also=receipt.saver(response))
        return response

    return await idempotent(request, desk, operator, action)


@router.post("/v1/proposals/{proposal_id}/approve", response_model=Proposal, tags=["proposals"])
async def approve(
    request: Request,
    proposal_id: str,
    desk: DeskDep,
    operator: Operator,
    body: Annotated[Decision | None, Body()] = None,
    _key: IdemKey = None,
) -> Response:
    """Approve a pending proposal (first decision wins; 409 shows the decided one)."""
    return await decide(request, desk, operator, proposal_id, body, approve=True)


@router.post("/v1/proposals/{proposal_id}/reject", response_model=Proposal, tags=["proposals"])
async def reject(
    request: Request,
    proposal_id: str,
    desk: DeskDep,
    operator: Operator,
    body: Annotated[Decision | None, Body()] = None,
    _key: IdemKey = None,
) -> Response:
    """Reject a pending proposal; a paused run continues without the action."""
    return await decide(request, desk, operator, proposal_id, body, approve=False)


@router.post(
    "/v1/sim/runs/{run_id}/inject",
    status_code=202,
    tags=["simulator"],
    openapi_extra={"x-simulator-only": True},
)
async def inject(
    run_id: str, body: InjectRequest, desk: DeskDep, _operator: Operator
) -> JSONResponse:
    """Simulator only: inject a fault into a live run (a real backend answers 404)."""
    engine = live_engine(desk, run_id)
    if engine.done:
        raise ApiError("run.terminal", f"run {run_id} already {engine.state}")
    try:
        engine.inject(body.kind, dict(body.params), now_utc())
    except (TypeError, ValueError) as exc:
        raise ApiError(
            "validation.failed",
            f"bad params for {body.kind}: {exc}",
            errors=[{"loc": ["body", "params"], "msg": str(exc)}],
        ) from None
    desk.commit(engine)
    return ok({"run_id": run_id, "kind": body.kind, "status": "scheduled"}, 202)
