"""Routes for the desk itself: capabilities, whoami, bookings and estimates."""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from ito_tui.contract import (
    API_VERSION,
    Booking,
    BookingStatus,
    Capabilities,
    Estimate,
    Page,
    Refusal,
    TrainingSpec,
    WhoAmI,
    now_utc,
)

from .catalog import GPU_SKUS, MODEL_SIZES, TARGET_CAPABILITIES
from .config import MAX_BUDGET_USD, SCENARIOS, SERVER_NAME, SERVER_VERSION
from .guards import DeskDep, Operator
from .planner import plan_and_estimate
from .problems import ApiError
from .runtime import Desk

router = APIRouter()

CAPABILITY_NAMES = (
    "bookings.read", "estimates.create", "runs.create", "runs.read", "runs.events",
    "runs.telemetry", "runs.cancel", "proposals.read", "proposals.decide", "sim.inject",
    "runs.logs", "runs.fleet",
)  # fmt: skip
SCAFFOLD_MISSING = {
    "runs.create": "the desk training-run backend is a scaffold",
    "runs.logs": "job logs are not wired on this backend yet",
    "runs.fleet": "the fleet view is not wired on this backend yet",
}
"""What a scaffold backend (the real one today) answers 501 for, and why."""


def ok(
    body: BaseModel | list[Any] | dict[str, Any],
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A JSON response from a contract model (or a list/dict of them)."""
    if isinstance(body, BaseModel):
        content: Any = body.model_dump(mode="json")
    elif isinstance(body, list):
        content = [b.model_dump(mode="json") if isinstance(b, BaseModel) else b for b in body]
    else:
        content = body
    return JSONResponse(content, status_code=status, headers=headers)


def encode_cursor(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, key: str) -> int | None:
    """The integer position a cursor carries; 400 `request.invalid_cursor` if it is not ours."""
    if cursor is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw)[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(key)
        return value
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise ApiError("request.invalid_cursor", "cursor is not one this server issued") from None


Limit = Annotated[int, Query(ge=1, le=200, description="Page size.")]
Cursor = Annotated[str | None, Query(max_length=512, description="From `next_cursor`.")]


@router.get("/v1/capabilities", response_model=Capabilities, tags=["desk"])
async def capabilities(desk: DeskDep) -> JSONResponse:
    """What this server can do; needs no token. `server.mode` is `simulated` (DEMO)."""
    scaffold = desk.config.mode == "scaffold"
    caps: list[dict[str, Any]] = []
    for name in CAPABILITY_NAMES:
        if name in SCAFFOLD_MISSING and scaffold:
            caps.append(
                {"name": name, "status": "not_implemented", "detail": SCAFFOLD_MISSING[name]}
            )
        elif name == "sim.inject" and scaffold:
            continue
        else:
            caps.append({"name": name, "status": "available"})
    body = Capabilities.model_validate(
        {
            "api_version": API_VERSION,
            "server": {
                "name": SERVER_NAME,
                "version": SERVER_VERSION,
                "mode": "scaffold" if scaffold else "simulated",
            },
            "capabilities": caps,
            "model_sizes": list(MODEL_SIZES),
            "gpu_skus": list(GPU_SKUS),
            "post_training": ["sft", "dpo", "rlvr"],
            "target_capabilities": list(TARGET_CAPABILITIES),
            "limits": {
                "max_budget_usd": MAX_BUDGET_USD,
                "event_retention": desk.config.event_retention,
                "heartbeat_s": desk.config.heartbeat_s,
                "log_line_bytes": desk.config.log_line_bytes,
                "log_retention": desk.config.log_retention,
            },
        }
    )
    return ok(body)


@router.get("/v1/whoami", response_model=WhoAmI, tags=["desk"])
async def whoami(operator: Operator) -> JSONResponse:
    """The operator the bearer token belongs to."""
    return ok(WhoAmI(operator=operator))


@router.get("/v1/bookings", response_model=Page[Booking], tags=["bookings"])
async def bookings(
    desk: DeskDep,
    _operator: Operator,
    status: Annotated[BookingStatus | None, Query()] = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> JSONResponse:
    """Bookings made by ito-compute; only `completed` ones can take a run."""
    offset = decode_cursor(cursor, "o") or 0
    items = [b for b in desk.bookings() if status is None or str(b.status) == status.value]
    page = items[offset : offset + limit]
    nxt = encode_cursor({"o": offset + limit}) if offset + limit < len(items) else None
    return ok({"items": [b.model_dump(mode="json") for b in page], "next_cursor": nxt})


@router.get("/v1/bookings/{booking_id}", response_model=Booking, tags=["bookings"])
async def booking(booking_id: str, desk: DeskDep, _operator: Operator) -> JSONResponse:
    found = desk.booking(booking_id)
    if found is None:
        raise ApiError("booking.not_found", f"no booking {booking_id}")
    return ok(found)


def preflight(desk: Desk, spec: TrainingSpec, booking: Booking) -> Estimate:
    """The planner's estimate plus the scenario's pre-flight verdict (one code path)."""
    scenario = scenario_of(desk, spec)
    estimate = plan_and_estimate(spec, booking, max_budget_usd=MAX_BUDGET_USD, now=now_utc())
    if scenario == "refused" and not estimate.refusals:
        nominal = booking.fabric.gbit_per_s_per_gpu
        refusal = Refusal(
            code="fabric.too_slow_for_sync_dp",
            reason=(
                f"pre-flight all-reduce test measured {nominal * 0.18:.0f} Gbit/s per GPU "
                f"on a {nominal:.0f} Gbit/s {booking.fabric.kind} fabric: too slow for "
                "synchronous data parallelism (simulated `refused` scenario)"
            ),
            field="booking_id",
            evidence={
                "measured_gbit_per_s_per_gpu": round(nominal * 0.18, 1),
                "nominal_gbit_per_s_per_gpu": nominal,
                "required_frac_of_nominal": 0.6,
            },
            suggestion="ask the desk to check the fabric, or use another booking",
        )
        estimate = estimate.model_copy(update={"refusals": [refusal]})
    return estimate


def scenario_of(desk: Desk, spec: TrainingSpec) -> str:
    scenario = (spec.sim.scenario if spec.sim else None) or desk.config.scenario
    if scenario not in SCENARIOS:
        raise ApiError(
            "validation.failed",
            f"unknown scenario {scenario!r}",
            errors=[
                {
                    "loc": ["body", "sim", "scenario"],
                    "msg": f"one of {', '.join(SCENARIOS)}",
                    "type": "enum",
                }
            ],
        )
    return scenario


@router.post("/v1/estimates", response_model=Estimate, tags=["runs"])
async def estimates(spec: TrainingSpec, desk: DeskDep, _operator: Operator) -> JSONResponse:
    """Plan, cost, time, refusals and warnings for a spec on a booking (nothing is started)."""
    found = desk.booking(spec.booking_id)
    if found is None:
        raise ApiError("booking.not_found", f"no booking {spec.booking_id}")
    return ok(preflight(desk, spec, found))
