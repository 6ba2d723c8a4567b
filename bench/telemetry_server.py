"""A loopback backend serving one run's telemetry of N samples, fast (bench #19).

    python -m bench.telemetry_server --samples 1000000 --page 5000

desk_sim cannot hold 10^6 samples quickly (every one is a SQLite row and its min/max
blocks); this server holds none: each page is made on request from a template of a
desk_sim sample (the fixed fields and the 12 torchtitan metrics `physics.open_metrics`
gives, ~880 bytes of JSON), filled per sample with its seq (1..N), step (= seq), tokens,
time, loss and spend; every 10,007th sample's `loss_metrics/global_max_loss` is "NaN"
(a diverged rank, as desk_sim writes it). It answers `GET /v1/capabilities` (telemetry
available), `GET /v1/runs/run_bench/telemetry` with `since_seq=` (pages of `--page`
samples after it), `from_step=`/`to_step=` and `max_points=` (evenly spaced samples of the
range, for the CLI's metric-name survey), any bearer token. It prints `telemetry server
listening on http://127.0.0.1:PORT` once it accepts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import socket
import sys
from datetime import timedelta

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .events import T0, telemetry_data

RUN_ID = "run_bench"
METRICS = {
    "loss_metrics/global_avg_loss": 0.0,
    "loss_metrics/global_max_loss": 0.0,
    "grad_norm": 0.8512,
    "throughput(tps)": 8412,
    "tflops": 391.65,
    "memory/max_active(GiB)": 57.2,
    "memory/max_reserved(%)": 76.88,
    "memory/num_alloc_retries": 0.0,
    "time_metrics/end_to_end(s)": 4.123,
    "time_metrics/data_loading(%)": 0.77,
    "lr": 0.0003,
    "mfu(%)": 39.6,
}
"""A desk_sim pretrain sample's open metrics (`physics.open_metrics`'s names)."""
NAN_EVERY = 10_007

_SENTINELS = {"seq": 111111111, "step": 222222222, "tokens_seen": 333333333}


def _template() -> str:
    """One sample's JSON with `%`-placeholders for what varies."""
    body = telemetry_data(0, 0)
    body.update(_SENTINELS, ts="@TS@", loss=4.444444, spend_usd="@USD@")
    body["metrics"] = dict(METRICS, **{"loss_metrics/global_avg_loss": 4.444444})
    body["metrics"]["loss_metrics/global_max_loss"] = "@MAX@"
    text = json.dumps(body, separators=(",", ":")).replace("%", "%%")
    for name, value in _SENTINELS.items():
        text = text.replace(str(value), f"%({name})d")
    return (
        text.replace('"@TS@"', '"%(ts)s"')
        .replace("4.444444", "%(loss)r")
        .replace('"@USD@"', '"%(usd)s"')
        .replace('"@MAX@"', "%(max)s")
    )


TEMPLATE = _template()
_BASE = T0.replace(tzinfo=None)


def sample_json(seq: int) -> str:
    """Sample `seq` (1-based) as JSON."""
    loss = round(2.1 + 1.8 * math.exp(-seq / 40_000) + 0.03 * math.sin(seq / 17), 5)
    return TEMPLATE % {
        "seq": seq,
        "step": seq,
        "tokens_seen": seq * 4_194_304,
        "ts": (_BASE + timedelta(seconds=4 * seq)).isoformat() + "Z",
        "loss": loss,
        "usd": f"{1234.5 + seq * 0.05:.2f}",
        "max": '"NaN"' if seq % NAN_EVERY == 0 else repr(round(loss * 1.02, 4)),
    }


class TelemetryServer:
    def __init__(self, samples: int, page: int) -> None:
        self.samples = samples
        self.page = page
        self.caps = {
            "api_version": "v1",
            "server": {"name": "bench-telemetry", "version": "1", "mode": "production"},
            "capabilities": [
                {"name": n, "status": "available"} for n in ("runs.read", "runs.telemetry")
            ],
            "model_sizes": ["8B"],
            "gpu_skus": ["H100-SXM-80GB"],
            "post_training": ["sft", "dpo", "rlvr"],
            "target_capabilities": ["general"],
            "limits": {"max_budget_usd": "100000.00", "event_retention": 1000, "heartbeat_s": 15},
        }

    async def capabilities(self, request: Request) -> Response:
        return JSONResponse(self.caps)

    async def telemetry(self, request: Request) -> Response:
        q = request.query_params
        if request.path_params["run_id"] != RUN_ID:
            return JSONResponse({"code": "run.not_found", "status": 404}, 404)
        since = int(q.get("since_seq") or 0)
        lo = max(int(q.get("from_step") or 1), since + 1, 1)
        hi = min(int(q.get("to_step") or self.samples), self.samples)
        if q.get("max_points"):
            count = max(hi - lo + 1, 0)
            points = min(int(q["max_points"]), count)
            seqs = sorted({lo + i * (count - 1) // max(points - 1, 1) for i in range(points)})
            nxt = self.samples
        else:
            seqs = list(range(lo, min(hi, lo + self.page - 1) + 1))
            nxt = seqs[-1] if seqs else since
        body = '{"items":[' + ",".join(map(sample_json, seqs)) + f'],"next_since_seq":{nxt}}}'
        return Response(body, media_type="application/json")


def make_app(server: TelemetryServer) -> Starlette:
    return Starlette(
        routes=[
            Route("/v1/capabilities", server.capabilities),
            Route("/v1/runs/{run_id}/telemetry", server.telemetry),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.telemetry_server")
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--page", type=int, default=5_000, help="samples per raw page")
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = make_app(TelemetryServer(args.samples, args.page))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    sock.listen(128)
    print(f"telemetry server listening on http://127.0.0.1:{port}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    sys.exit(0)


if __name__ == "__main__":
    main()
