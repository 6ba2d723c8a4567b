"""A loopback proxy in front of desk_sim whose event stream runs at an exact rate.

    python -m bench.rate_server --upstream http://127.0.0.1:PORT --run-id run_… --rate 10

Every request is forwarded to `--upstream` (desk_sim), except
`GET /v1/runs/{run-id}/events`, which this server answers itself: `retry:`,
then telemetry events (a `stage.progress` every 10th) numbered on from the
run's `last_event_seq` (or from `Last-Event-ID` / `since_seq`), at `--rate`
events per wall second, sent in ticks of at most 10 ms. `POST /bench/rate?value=R`
changes the rate at run time; `POST /bench/burst?n=N&kind=K` sends N events at once
(`kind` `slo`: `slo.breached`, each an alert in the TUI; else the usual telemetry
mix); `GET /bench/stats` returns the events sent so far.
Bodies come from a template filled per event (seq, step, tokens, loss), so
the server spends a few µs per event even at 10^4 events/s.

It prints `rate server listening on http://127.0.0.1:PORT` once it accepts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import socket
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .events import progress_json, slo_json, telemetry_json

_HOP = {"host", "content-length", "connection", "transfer-encoding", "content-encoding"}
SEQ, STEP, TOKENS, LOSS = 987654321, 123456789, 517769445, "4.44444"
TS = "2099-01-01T00:00:00.000Z"
"""Sentinel for every timestamp of a template: replaced by the wall clock when sent, so
samples move forward from the run's real history (an x going back would be a rewind)."""


class Templates:
    """Event bodies with sentinels to fill per event."""

    def __init__(self, run_id: str, stage: str) -> None:
        tel = json.loads(telemetry_json(SEQ, 1000, run_id, stage))
        tel["data"].update(step=STEP, tokens_seen=TOKENS, loss=float(LOSS), ts=TS)
        tel.update(ts=TS, sim_ts=TS)
        self.telemetry = json.dumps(tel, separators=(",", ":"))
        prog = json.loads(progress_json(SEQ, 1000, run_id, 10**9, stage))
        prog["data"]["progress"].update(step=STEP, tokens=TOKENS, frac=0.5)
        prog.update(ts=TS, sim_ts=TS)
        self.progress = json.dumps(prog, separators=(",", ":"))
        slo = json.loads(slo_json(SEQ, run_id, stage))
        slo.update(ts=TS, sim_ts=TS)
        self.slo_breach = json.dumps(slo, separators=(",", ":"))
        self.losses = [
            f"{2.1 + 0.3 * math.sin(i / 9) + 0.05 * math.cos(i):.5f}" for i in range(997)
        ]

    def message(self, seq: int, step: int, ts: str) -> str:
        is_progress = seq % 10 == 0
        body = (self.progress if is_progress else self.telemetry).replace(str(SEQ), str(seq))
        body = body.replace(TS, ts)
        body = body.replace(str(STEP), str(step)).replace(str(TOKENS), str(step * 4096))
        if not is_progress:
            body = body.replace(LOSS, self.losses[step % len(self.losses)])
        kind = "stage.progress" if is_progress else "telemetry"
        return f"id: {seq}\nevent: {kind}\ndata: {body}\n\n"

    def slo(self, seq: int, ts: str) -> str:
        body = self.slo_breach.replace(str(SEQ), str(seq)).replace(TS, ts)
        return f"id: {seq}\nevent: slo.breached\ndata: {body}\n\n"


def _now() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class RateServer:
    """The proxy's state: upstream client, rate, counters."""

    def __init__(self, upstream: str, run_id: str, rate: float, first_step: int) -> None:
        self.upstream = httpx.AsyncClient(base_url=upstream, timeout=30.0)
        self.run_id = run_id
        self.rate = rate
        self.rate_changed = 0.0
        self.first_step = first_step
        self.sent = 0
        self.streams = 0
        self.templates: Templates | None = None
        self.start_seq: int | None = None
        self.bursts: list[tuple[int, str]] = []
        """Bursts asked for (`POST /bench/burst`) that the stream has not sent yet."""

    async def _run_snapshot(self, headers: dict[str, str]) -> dict[str, Any]:
        r = await self.upstream.get(f"/v1/runs/{self.run_id}", headers=headers)
        r.raise_for_status()
        doc: dict[str, Any] = r.json()
        return doc

    async def events(self, request: Request) -> Response:
        if request.path_params["run_id"] != self.run_id:
            return await self.proxy(request)
        auth = {"authorization": request.headers.get("authorization", "")}
        run = await self._run_snapshot(auth)
        if self.templates is None:
            self.templates = Templates(self.run_id, str(run.get("current_stage") or "pretrain"))
            self.start_seq = int(run.get("last_event_seq") or 0)
        resume = request.headers.get("last-event-id") or request.query_params.get("since_seq")
        seq = max(int(resume) if resume and resume.isdigit() else 0, self.start_seq or 0)
        return StreamingResponse(
            self._stream(seq),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _stream(self, seq: int) -> AsyncIterator[str]:
        assert self.templates is not None and self.start_seq is not None
        self.streams += 1
        try:
            yield "retry: 3000\n\n"
            t0, sent, rate, epoch = time.perf_counter(), 0, self.rate, self.rate_changed
            while True:
                while self.bursts:
                    n, kind = self.bursts.pop(0)
                    parts = []
                    ts = _now()
                    for _ in range(n):
                        seq += 1
                        if kind == "slo":
                            parts.append(self.templates.slo(seq, ts))
                        else:
                            step = self.first_step + (seq - self.start_seq)
                            parts.append(self.templates.message(seq, step, ts))
                    self.sent += n
                    yield "".join(parts)  # one write: the whole burst arrives at once
                if epoch != self.rate_changed:  # rate changed: count anew from now
                    t0, sent, rate, epoch = time.perf_counter(), 0, self.rate, self.rate_changed
                due = int((time.perf_counter() - t0) * rate)
                if due > sent:
                    # Never more than one second's worth at once (a stalled reader).
                    n = min(due - sent, max(int(rate), 1))
                    parts = []
                    ts = _now()
                    for _ in range(n):
                        seq += 1
                        step = self.first_step + (seq - self.start_seq)
                        parts.append(self.templates.message(seq, step, ts))
                    self.sent += n
                    sent = due
                    yield "".join(parts)
                if rate <= 0:
                    await asyncio.sleep(0.05)
                else:
                    nxt = t0 + (sent + 1) / rate
                    await asyncio.sleep(min(max(nxt - time.perf_counter(), 0.0), 0.05) or 0.01)
        finally:
            self.streams -= 1

    async def proxy(self, request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        r = await self.upstream.request(
            request.method,
            request.url.path,
            params=request.query_params,
            headers=headers,
            content=await request.body(),
        )
        out = {k: v for k, v in r.headers.items() if k.lower() not in _HOP}
        return Response(r.content, status_code=r.status_code, headers=out)

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"sent": self.sent, "streams": self.streams, "rate": self.rate})

    async def burst(self, request: Request) -> Response:
        n = int(request.query_params["n"])
        kind = request.query_params.get("kind", "telemetry")
        self.bursts.append((n, kind))
        return JSONResponse({"n": n, "kind": kind})

    async def set_rate(self, request: Request) -> Response:
        self.rate = float(request.query_params["value"])
        self.rate_changed = time.perf_counter()
        return JSONResponse({"rate": self.rate})


def make_app(server: RateServer) -> Starlette:
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    return Starlette(
        routes=[
            Route("/bench/stats", server.stats),
            Route("/bench/rate", server.set_rate, methods=["POST"]),
            Route("/bench/burst", server.burst, methods=["POST"]),
            Route("/v1/runs/{run_id}/events", server.events),
            Route("/{path:path}", server.proxy, methods=methods),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rate_server")
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--rate", type=float, default=1.0)
    parser.add_argument("--first-step", type=int, default=100_000)
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = make_app(RateServer(args.upstream, args.run_id, args.rate, args.first_step))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)

    # Listening before uvicorn starts: connections made from now on wait in the backlog.
    sock.listen(128)
    print(f"rate server listening on http://127.0.0.1:{port}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    sys.exit(0)


if __name__ == "__main__":
    main()
