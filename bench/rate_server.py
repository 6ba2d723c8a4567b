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

For issue 18's benchmarks it can also serve, for that run only, a job-log flood
(`--log-rate R` lines/s on a global clock, `POST /bench/lograte?value=R`; the stream
honours `tail=`, `Last-Event-ID`/`since_seq=` and sends `log.truncated` past
`LOG_RETENTION`; `/logs/page` pages over the same lines; a request with a filter goes
to desk_sim) and a fleet of `--fleet-nodes N` nodes whose counters move at every
request (`bench/diagnose_data.py`); `POST /bench/burst?n=1&kind=fleet` sends a
`straggler.detected` / `straggler.cleared` in turn, with the fleet changed to match.
`GET /bench/stats` also counts log lines sent, open log streams and fleet requests.

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

from .diagnose_data import Fleet, Flood, page
from .events import progress_json, slo_json, telemetry_json

LOG_RETENTION = 100_000
LOG_FILTERS = ("rank", "level", "source", "q")

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

    def __init__(
        self,
        upstream: str,
        run_id: str,
        rate: float,
        first_step: int,
        log_rate: float | None = None,
        fleet_nodes: int = 0,
    ) -> None:
        self.upstream = httpx.AsyncClient(base_url=upstream, timeout=30.0)
        self.flood = Flood(log_rate) if log_rate is not None else None
        self.fleet = Fleet(fleet_nodes) if fleet_nodes else None
        self.log_sent = 0
        self.log_last = 0
        """The newest seq any log stream has written (a reader behind the flood lags it)."""
        self.log_streams = 0
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
                        elif kind == "fleet" and self.fleet is not None:
                            parts.append(self.fleet.straggle(seq, self.run_id))
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
        return JSONResponse(
            {
                "sent": self.sent,
                "streams": self.streams,
                "rate": self.rate,
                "log_sent": self.log_sent,
                "log_streams": self.log_streams,
                "log_seq": self.flood.advance(time.monotonic()) if self.flood else 0,
                "log_last_sent": self.log_last,
                "fleet_requests": self.fleet.requests if self.fleet else 0,
            }
        )

    # ------------------------------------------------------------ issue 18

    def _ours(self, request: Request, what: object) -> bool:
        if request.path_params["run_id"] != self.run_id or what is None:
            return False
        return not any(k in request.query_params for k in LOG_FILTERS)

    async def logs(self, request: Request) -> Response:
        if not self._ours(request, self.flood):
            return await self.proxy(request)
        assert self.flood is not None
        newest = self.flood.advance(time.monotonic())
        resume = request.headers.get("last-event-id") or request.query_params.get("since_seq")
        dropped = 0
        if resume is not None and resume.isdigit():
            start = int(resume) + 1
            oldest = max(1, newest - LOG_RETENTION + 1)
            if start < oldest:
                start, dropped = oldest, oldest - start
        else:
            tail = int(request.query_params.get("tail", "200"))
            start = max(1, newest - tail + 1)
        return StreamingResponse(
            self._log_stream(start, dropped),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _log_stream(self, nxt: int, dropped: int) -> AsyncIterator[str]:
        assert self.flood is not None
        self.log_streams += 1
        try:
            yield "retry: 3000\n\n"
            if dropped:
                yield f'event: log.truncated\ndata: {{"dropped":{dropped}}}\n\n'
            quiet = time.monotonic()
            while True:
                newest = self.flood.advance(time.monotonic())
                if newest >= nxt:
                    upto = min(newest, nxt + 5_000 - 1)  # a backlog goes in pieces
                    yield self.flood.lines(nxt, upto)
                    self.log_sent += upto - nxt + 1
                    self.log_last = max(self.log_last, upto)
                    nxt, quiet = upto + 1, time.monotonic()
                    if nxt <= newest:
                        await asyncio.sleep(0)
                        continue
                elif time.monotonic() - quiet > 5.0:
                    quiet = time.monotonic()
                    yield ": keepalive\n\n"
                await asyncio.sleep(0.01)
        finally:
            self.log_streams -= 1

    async def log_page(self, request: Request) -> Response:
        if not self._ours(request, self.flood):
            return await self.proxy(request)
        assert self.flood is not None
        newest = self.flood.advance(time.monotonic())
        before = request.query_params.get("before_seq")
        limit = min(int(request.query_params.get("limit", "500")), 1000)
        body = page(int(before) if before else None, limit, newest)
        return Response(body, media_type="application/json")

    async def fleet_snapshot(self, request: Request) -> Response:
        if request.path_params["run_id"] != self.run_id or self.fleet is None:
            return await self.proxy(request)
        return Response(self.fleet.snapshot(), media_type="application/json")

    async def set_log_rate(self, request: Request) -> Response:
        if self.flood is None:
            self.flood = Flood(0.0)
        self.flood.advance(time.monotonic())  # lines so far at the old rate
        self.flood.rate = float(request.query_params["value"])
        return JSONResponse({"log_rate": self.flood.rate})

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
            Route("/bench/lograte", server.set_log_rate, methods=["POST"]),
            Route("/v1/runs/{run_id}/events", server.events),
            Route("/v1/runs/{run_id}/logs", server.logs),
            Route("/v1/runs/{run_id}/logs/page", server.log_page),
            Route("/v1/runs/{run_id}/fleet", server.fleet_snapshot),
            Route("/{path:path}", server.proxy, methods=methods),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rate_server")
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--rate", type=float, default=1.0)
    parser.add_argument("--first-step", type=int, default=100_000)
    parser.add_argument("--log-rate", type=float, help="serve a job-log flood at this rate")
    parser.add_argument("--fleet-nodes", type=int, default=0, help="serve a fleet this big")
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = make_app(
        RateServer(
            args.upstream, args.run_id, args.rate, args.first_step, args.log_rate, args.fleet_nodes
        )
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)

    # Listening before uvicorn starts: connections made from now on wait in the backlog.
    sock.listen(128)
    print(f"rate server listening on http://127.0.0.1:{port}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    sys.exit(0)


if __name__ == "__main__":
    main()
