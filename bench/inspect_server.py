"""The rate proxy (bench/rate_server.py) with a synthetic telemetry history of 10^7 samples.

    python -m bench.inspect_server --upstream http://127.0.0.1:PORT --run-id run_… [--samples N]

For `--run-id`, `GET /v1/runs/{id}/telemetry` is answered here from a run of `--samples`
samples that exists only as a formula (seq = step = i, one second and 4 Mi tokens a
step, a decaying loss with a wiggle): `from_step`/`to_step` pick the range, `max_points`
buckets it (per bucket its first sample and its middle one, and the range's last), so a
request costs O(max_points) whatever the history; without `max_points`, pages of 1,000
after `since_seq`. Everything else is the rate proxy's (events at `--rate`, the rest
forwarded to desk_sim). `GET /bench/stats` adds `telemetry_requests`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import socket
import sys
from datetime import timedelta
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .events import T0, telemetry_data
from .rate_server import RateServer, make_app

PAGE = 1_000


def loss(step: int) -> float:
    """The synthetic run's loss at `step`: falling over the whole run, with a wiggle."""
    return 2.1 + 1.8 * math.exp(-step / 2e6) + 0.03 * math.sin(step / 17)


def sample(step: int) -> dict[str, Any]:
    body = telemetry_data(step, step)
    body["ts"] = (T0 + timedelta(seconds=step)).isoformat().replace("+00:00", "Z")
    body["loss"] = round(loss(step), 6)
    return body


def picks(lo: int, hi: int, max_points: int) -> list[int]:
    """At most `max_points` steps of [lo, hi]: per bucket its first and middle, then `hi`."""
    n = hi - lo + 1
    if n <= max_points:
        return list(range(lo, hi + 1))
    buckets = max(1, (max_points - 1) // 2)
    size = n / buckets
    out: set[int] = {hi}
    for j in range(buckets):
        start = lo + int(j * size)
        end = lo + int((j + 1) * size) - 1
        out.add(start)
        out.add((start + end) // 2)
    return sorted(out)


class InspectServer:
    """The synthetic history of one run, in front of the rate proxy."""

    def __init__(self, rate: RateServer, samples: int) -> None:
        self.rate = rate
        self.samples = samples
        self.requests = 0

    async def telemetry(self, request: Request) -> Response:
        if request.path_params["run_id"] != self.rate.run_id:
            return await self.rate.proxy(request)
        self.requests += 1
        q = request.query_params
        since = int(q.get("since_seq") or 0)
        lo = max(1, since + 1, int(q.get("from_step") or 1))
        hi = min(self.samples, int(q.get("to_step") or self.samples))
        nxt: int | None = None
        if lo > hi:
            steps: list[int] = []
        elif q.get("max_points"):
            steps = picks(lo, hi, int(q["max_points"]))
        else:
            steps = list(range(lo, min(hi, lo + PAGE - 1) + 1))
            nxt = steps[-1] if steps[-1] < hi else None
        body = {"items": [sample(s) for s in steps], "next_since_seq": nxt}
        return Response(json.dumps(body), media_type="application/json")

    async def stats(self, request: Request) -> Response:
        base = json.loads(bytes((await self.rate.stats(request)).body))
        return JSONResponse({**base, "telemetry_requests": self.requests})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.inspect_server")
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--rate", type=float, default=0.0)
    parser.add_argument("--samples", type=int, default=10_000_000)
    args = parser.parse_args(argv)
    rate = RateServer(args.upstream, args.run_id, args.rate, args.samples + 1)
    server = InspectServer(rate, args.samples)
    app: Starlette = make_app(rate)
    app.router.routes.insert(0, Route("/v1/runs/{run_id}/telemetry", server.telemetry))
    app.router.routes.insert(0, Route("/bench/stats", server.stats))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    uv = uvicorn.Server(config)
    sock.listen(128)
    print(f"inspect server listening on http://127.0.0.1:{port}", flush=True)
    asyncio.run(uv.serve(sockets=[sock]))
    sys.exit(0)


if __name__ == "__main__":
    main()
