"""`GET /v1/runs/{id}/fleet`: the run's fleet (capability `runs.fleet`, API.md v1.1).

The snapshot is computed from the engine's state at its simulated clock
(`fleet.snapshot`), so it reflects exactly the events committed up to its
`last_event_seq` (an added field): a client that follows the event stream and
fetches the fleet sees the same story in both. A run that ended keeps the fleet
it ended with (the failed node `replaced`, the spare in its place).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ito_tui.contract import Fleet, now_utc

from . import fleet
from .guards import DeskDep, Operator
from .problems import ApiError

router = APIRouter(tags=["runs"])


async def fleet_wired(desk: DeskDep) -> None:
    """A scaffold backend has no fleet view: 501 naming `runs.fleet`, as the real one would."""
    if desk.config.mode == "scaffold":
        raise ApiError(
            "capability.not_implemented",
            "the fleet view is not wired on this backend yet",
            capability="runs.fleet",
        )


@router.get("/v1/runs/{run_id}/fleet", response_model=Fleet)
async def run_fleet(
    run_id: str,
    desk: DeskDep,
    _operator: Operator,
    _wired: Annotated[None, Depends(fleet_wired)],
) -> JSONResponse:
    """The quorum, the replicas and every node with its 8 GPUs' counters (404 unknown run)."""
    engine = desk.engine(run_id)
    if engine is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    return JSONResponse(fleet.snapshot(engine.s, now_utc()))
