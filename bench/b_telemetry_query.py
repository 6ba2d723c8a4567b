"""#12 `GET /v1/runs/{id}/telemetry?max_points=600` on a run with 10^6 samples vs 10^3.

Two runs are created on desk_sim; with desk_sim stopped, their telemetry is
topped up to 10^3 and 10^6 samples through desk_sim's own `Store.add_telemetry`
(so the pre-aggregated blocks are built the way the simulator builds them),
then desk_sim restarts on that DB, nearly frozen, and the two queries
alternate over one keep-alive connection.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import httpx

from .context import Context, backend
from .events import telemetry_data
from .live import create_run
from .record import Record
from .stats import summary


def _seed(db: Path, run_id: str, total: int) -> int:
    from ito_tui.desk_sim.store import Store

    store = Store(db)
    try:
        row = store.conn.execute(
            "SELECT COALESCE(MAX(idx), -1), COALESCE(MAX(seq), 0), COUNT(*) FROM telemetry "
            "WHERE run_id=?",
            (run_id,),
        ).fetchone()
        idx, seq, have = int(row[0]) + 1, max(int(row[1]), store.run(run_id).last_seq) + 1, row[2]  # type: ignore[union-attr]
        need = max(total - int(have), 0)
        batch = 20_000
        template = telemetry_data(0, 0)
        for start in range(0, need, batch):
            rows = []
            for i in range(start, min(start + batch, need)):
                step = 10_000 + i
                body = dict(template, seq=seq + i, step=step, tokens_seen=step * 4096)
                body["loss"] = 2.0 + ((i * 7919) % 1000) / 1000.0
                rows.append((idx + i, seq + i, body["loss"], json.dumps(body)))
            with store.tx():
                store.add_telemetry(run_id, rows)
        return int(have) + need
    finally:
        store.close()


def run(ctx: Context) -> list[Record]:
    big_n = ctx.count(1_000_000, 20_000)
    small_n = 1_000
    rounds = ctx.count(15, 5)
    with tempfile.TemporaryDirectory(prefix="ito-bench-tq-") as tmp:
        db = Path(tmp) / "sim.db"
        with backend(speed=1.0, scenario="happy", db=db) as be:
            small, big = create_run(be), create_run(be)
        t0 = time.perf_counter()
        n_small, n_big = _seed(db, small, small_n), _seed(db, big, big_n)
        ctx.log(f"seeded {n_small} and {n_big} samples in {time.perf_counter() - t0:.0f} s")
        times: dict[str, list[float]] = {"small": [], "big": []}
        points: dict[str, int] = {}
        with (
            backend(speed=0.001, scenario="happy", db=db) as be,
            httpx.Client(
                base_url=be.url, headers={"Authorization": f"Bearer {be.token}"}, timeout=60
            ) as c,
        ):

            def get(run_id: str) -> tuple[float, int]:
                t = time.perf_counter()
                r = c.get(f"/v1/runs/{run_id}/telemetry", params={"max_points": 600})
                dt = time.perf_counter() - t
                r.raise_for_status()
                return dt, len(r.json()["items"])

            get(small), get(big)  # warm-up (page cache, connection)
            for r in range(rounds):
                order = (("small", small), ("big", big))
                for name, run_id in order if r % 2 == 0 else order[::-1]:
                    dt, n = get(run_id)
                    times[name].append(dt * 1000)
                    points[name] = n
    v, b = summary(times["big"]), summary(times["small"])
    ratio = v["median"] / b["median"]
    ctx.log(f"big {v['median']:.1f} ms ({points['big']} points), small {b['median']:.1f} ms")
    return [
        Record(
            12,
            "telemetry_query",
            f"GET telemetry max_points=600 on {n_big:.0e} samples",
            "ms",
            "≤ 3× the 10^3-sample query",
            v,
            b,
            f"same query on {n_small} samples",
            ratio=ratio,
            met=ratio <= 3.0,
            notes=[
                f"{rounds} alternating rounds, one keep-alive connection; points returned "
                f"{points.get('big')} vs {points.get('small')}"
            ],
        )
    ]
