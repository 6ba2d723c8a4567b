"""A backend whose job log and fleet break API.md v1.1 in the ways a real one could.

It offers `runs.logs` and `runs.fleet` and has one finished run whose log is lines
1..30, but: the stream's `id:` is off by one from the line's seq (`broken_logs_app(
id_off_by_one=True)`; the checks after the framing's need it right), a resume replays
from the start (Last-Event-ID ignored), `level=` is ignored, a resume past the end
answers 200 with nothing rather than 204, pages come newest first, a level that is no
level is accepted, the fleet lists a node twice, and telemetry ignores `metric=` and
`from_step`/`to_step`.
`check-backend` must name each.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.client import samples
from tests.client.logsrv import line_body
from tests.support.caps import CAPABILITY_NAMES, capabilities_body
from tests.tui import pipeline_fakes

RUN = "run_1"
N = 30
CAPABILITIES = capabilities_body(
    *CAPABILITY_NAMES, "runs.logs", "runs.fleet", mode="production", server="broken-logs"
)


def _json(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"X-Request-Id": "req_1"})


async def capabilities(request: Request) -> JSONResponse:
    return _json(CAPABILITIES)


async def whoami(request: Request) -> JSONResponse:
    return _json({"operator": "alice"})


async def runs(request: Request) -> JSONResponse:
    return _json({"items": [{**samples.run_summary(RUN), "state": "completed"}]})


async def run(request: Request) -> JSONResponse:
    return _json(samples.run(RUN, 5, "completed"))


async def empty(request: Request) -> JSONResponse:
    return _json([])


async def logs(request: Request, shift: int) -> Response:
    if request.headers.get("last-event-id") == str(N):
        return Response(status_code=200, media_type="text/event-stream")  # not 204
    tail = int(request.query_params.get("tail", "200"))
    first = max(N - tail, 0) + 1 if "last-event-id" not in request.headers else 1

    async def body() -> Any:
        yield b"retry: 3000\n\n"
        for seq in range(first, N + 1):
            data = json.dumps(line_body(seq, level="info"))
            yield f"id: {seq + shift}\nevent: log\ndata: {data}\n\n".encode()

    return StreamingResponse(
        body(), media_type="text/event-stream", headers={"X-Request-Id": "req_2"}
    )


async def page(request: Request) -> JSONResponse:
    limit = int(request.query_params.get("limit", "500"))
    before = int(request.query_params.get("before_seq", str(N + 1)))
    seqs = list(range(before - 1, max(before - 1 - limit, 0), -1))  # newest first
    nxt = min(seqs) if seqs and min(seqs) > 1 else None
    return _json({"items": [line_body(s) for s in seqs], "next_before_seq": nxt})


async def telemetry(request: Request) -> JSONResponse:
    metrics = {"grad_norm": 0.8, "lr": 0.0003}  # whatever metric= asked
    at = datetime(2026, 11, 29, tzinfo=UTC)
    # Steps 10, 20, 30 whatever from_step/to_step asked; a to_step below from_step is fine.
    items = [pipeline_fakes.sample(k, 10 * k, at, 3.2) for k in (1, 2, 3)]
    return _json({"items": [{**item, "metrics": metrics} for item in items]})


async def fleet(request: Request) -> JSONResponse:
    node = {"hostname": "b200-16n-ib-00", "state": "healthy", "gpus": []}
    return _json(
        {
            "ts": samples.TS,
            "quorum": {"quorum_id": 1, "participants": 1, "min_replicas": 1},
            "nodes": [node, node],
        }
    )


def broken_logs_app(*, id_off_by_one: bool) -> Starlette:
    async def stream(request: Request) -> Response:
        return await logs(request, 1 if id_off_by_one else 0)

    return Starlette(
        routes=[
            Route("/v1/capabilities", capabilities),
            Route("/v1/whoami", whoami),
            Route("/v1/runs", runs),
            Route(f"/v1/runs/{RUN}", run),
            Route(f"/v1/runs/{RUN}/checkpoints", empty),
            Route(f"/v1/runs/{RUN}/proposals", empty),
            Route(f"/v1/runs/{RUN}/logs", stream),
            Route(f"/v1/runs/{RUN}/logs/page", page),
            Route(f"/v1/runs/{RUN}/fleet", fleet),
            Route(f"/v1/runs/{RUN}/telemetry", telemetry),
        ]
    )
