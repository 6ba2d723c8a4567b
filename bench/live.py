"""Live-run fixtures: create a run on desk_sim over HTTP, wait for a stage, freeze it,
and put the rate-controlled proxy (bench/rate_server.py) in front of it."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from .context import ROOT, Backend, Context, backend


def _client(be: Backend) -> httpx.Client:
    return httpx.Client(
        base_url=be.url, headers={"Authorization": f"Bearer {be.token}"}, timeout=30.0
    )


def create_run(be: Backend, *, scenario: str | None = None, time_scale: float | None = None) -> str:
    """Submit a run on the first completed booking without an active run; its id."""
    with _client(be) as c:
        caps = c.get("/v1/capabilities").json()
        bookings = c.get("/v1/bookings", params={"status": "completed"}).json()["items"]
        free = [b for b in bookings if not b.get("active_run_id")]
        if not free:
            raise RuntimeError("no free completed booking on desk_sim")
        sim: dict[str, Any] = {}
        if scenario:
            sim["scenario"] = scenario
        if time_scale:
            sim["time_scale"] = time_scale
        sizes = [m for m in ("1.5B", "150M", "8B") if m in caps.get("model_sizes", [])]
        last = ""
        # The first booking and model size that pass pre-flight (windows and HBM differ).
        for booking in free:
            for size in sizes or caps["model_sizes"]:
                spec: dict[str, Any] = {
                    "booking_id": booking["booking_id"],
                    "model_size": size,
                    "data_ref": "catalog://fineweb-edu@1.3",
                    "target_capability": caps["target_capabilities"][0],
                    "budget_usd": "500000",
                }
                if sim:
                    spec["sim"] = sim
                r = c.post("/v1/runs", json=spec, headers={"Idempotency-Key": str(uuid.uuid4())})
                if r.status_code < 300:
                    return str(r.json()["run_id"])
                last = f"{r.status_code} {r.text[:300]}"
        raise RuntimeError(f"POST /v1/runs refused everywhere; last: {last}")


def cancel_run(be: Backend, run_id: str) -> None:
    """Cancel a run (no error if it already ended)."""
    with _client(be) as c:
        c.post(
            f"/v1/runs/{run_id}/cancel",
            json={"reason": "benchmark round over"},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )


def get_run(be: Backend, run_id: str) -> dict[str, Any]:
    with _client(be) as c:
        r = c.get(f"/v1/runs/{run_id}")
        r.raise_for_status()
        doc: dict[str, Any] = r.json()
        return doc


def wait_stage(be: Backend, run_id: str, stage: str, timeout: float = 120.0) -> dict[str, Any]:
    """Poll until the run's current stage is `stage` (raises on timeout or a terminal run)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = get_run(be, run_id)
        if run.get("current_stage") == stage:
            return run
        if run.get("terminal"):
            raise RuntimeError(f"run ended in {run.get('state')} before {stage}")
        time.sleep(0.2)
    raise RuntimeError(f"run {run_id} did not reach {stage} in {timeout} s")


@dataclass
class LiveRun:
    """A frozen desk_sim run with the rate proxy in front: point the app at `proxy`."""

    run_id: str
    sim: Backend
    proxy: Backend
    proxy_proc: subprocess.Popen[bytes]

    def set_rate(self, rate: float) -> None:
        httpx.post(
            f"{self.proxy.url}/bench/rate", params={"value": rate}, timeout=10
        ).raise_for_status()

    def burst(self, n: int, kind: str = "telemetry") -> None:
        """Have the proxy send `n` events at once (`kind` "slo": `slo.breached`)."""
        httpx.post(
            f"{self.proxy.url}/bench/burst", params={"n": n, "kind": kind}, timeout=10
        ).raise_for_status()

    def sent(self) -> int:
        return int(self.stats()["sent"])

    def stats(self) -> dict[str, Any]:
        """The proxy's counters (events and log lines sent, open streams, fleet requests)."""
        doc: dict[str, Any] = httpx.get(f"{self.proxy.url}/bench/stats", timeout=10).json()
        return doc

    def set_log_rate(self, rate: float) -> None:
        """The job-log flood's rate (lines/s) from now on (`--log-rate` given to the proxy)."""
        httpx.post(
            f"{self.proxy.url}/bench/lograte", params={"value": rate}, timeout=10
        ).raise_for_status()


_LISTENING = re.compile(rb"listening on (http://\S+)")


@contextmanager
def live_run(
    ctx: Context,
    rate: float,
    *,
    stage: str = "pretrain",
    proxy_args: tuple[str, ...] = (),
    history: str | None = None,
) -> Iterator[LiveRun]:
    """desk_sim runs a run fast until `stage`, is restarted nearly frozen on the same DB, and
    the rate proxy serves that run's event stream at `rate` events/s (`proxy_args`: more
    options of bench/rate_server.py, e.g. a log flood or a big fleet; `history`: desk_sim
    starts with a finished run of that scenario too, `--history`)."""
    with tempfile.TemporaryDirectory(prefix="ito-bench-live-") as tmp:
        db = Path(tmp) / "sim.db"
        extra = ["--history", history] if history else []
        with backend(speed=600.0, scenario="happy", db=db, extra=extra) as fast:
            run_id = create_run(fast)
            wait_stage(fast, run_id, stage)
            ctx.log(f"run {run_id} reached {stage}; restarting desk_sim nearly frozen")
        # Same DB, slow clock: the run stays where it is while the proxy streams events.
        with backend(speed=0.001, scenario="happy", db=db) as slow:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bench.rate_server", "--upstream", slow.url,
                 "--run-id", run_id, "--rate", str(rate), *proxy_args],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                url = _wait_url(proc)
                yield LiveRun(run_id, slow, Backend(url, slow.token, proc, db), proc)
            finally:
                proc.kill()
                proc.wait(timeout=10)


def _wait_url(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> str:
    out: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            m = _LISTENING.search(line)
            if m and not out:
                out.append(m.group(1).decode())

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not out and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    if not out:
        raise RuntimeError("rate server did not start")
    return out[0]
