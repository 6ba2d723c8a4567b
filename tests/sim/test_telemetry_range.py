"""`GET /telemetry?from_step=&to_step=`: only that step range, before paging and downsampling."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest

from ito_tui.contract import TelemetryPage
from ito_tui.desk_sim.store import Store
from ito_tui.desk_sim.telemetry import PAGE_LIMIT, telemetry_page
from tests.support.servers import SimHandle

from .helpers import create_run, key, wait_for


def steps_of(n: int, rewinds: dict[int, int]) -> list[int]:
    """Steps 0, 1, 2, … with the step set back to `rewinds[idx]` at those idx."""
    out, step = [], 0
    for i in range(n):
        step = rewinds.get(i, step)
        out.append(step)
        step += 1
    return out


def fill(store: Store, steps: list[int], losses: list[float], batch: int = 50_000) -> None:
    with store.tx():
        for start in range(0, len(steps), batch):
            store.add_telemetry(
                "run_r",
                [(i, 10 + 2 * i, losses[i],
                  f'{{"seq":{10 + 2 * i},"step":{steps[i]},"loss":{losses[i]!r}}}')
                 for i in range(start, min(len(steps), start + batch))],
            )  # fmt: skip


def wanted(steps: list[int], lo: int, hi: int, since_idx: int = 0) -> list[int]:
    return [i for i, s in enumerate(steps) if lo <= s <= hi and i >= since_idx]


def idx_of(bodies: list[str]) -> list[int]:
    return [(json.loads(b)["seq"] - 10) // 2 for b in bodies]


def test_a_rewound_stretch_gives_both_samples_of_each_step_in_seq_order(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    # 0..999, rewound to 900 (steps 900..999 twice), a new stage from 0 at idx 3000.
    steps = steps_of(4000, {1000: 900, 3000: 0})
    fill(store, steps, [3.0] * 4000, batch=333)  # batches that cut segments anywhere
    for lo, hi in [(950, 1050), (900, 999), (0, 10), (2500, 2950), (5000, 6000), (999, 999)]:
        bodies, nxt = telemetry_page(store.conn, "run_r", 0, None, steps=(lo, hi))
        assert idx_of(bodies) == wanted(steps, lo, hi), (lo, hi)
        if bodies:
            assert nxt == json.loads(bodies[-1])["seq"]
    bodies, _ = telemetry_page(store.conn, "run_r", 0, None, steps=(950, 960))
    got = [json.loads(b)["step"] for b in bodies]
    assert got == [*range(950, 961)] * 3  # first pass, rewound pass, the next stage
    # Open ends: only from, only to.
    bodies, _ = telemetry_page(store.conn, "run_r", 0, None, steps=(None, 5))
    assert idx_of(bodies) == wanted(steps, 0, 5)
    bodies, _ = telemetry_page(store.conn, "run_r", 0, None, steps=(2990, None))
    assert idx_of(bodies) == wanted(steps, 2990, 10**9)
    store.close()


def test_since_seq_pages_through_the_range_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    steps = steps_of(5000, {3000: 100})
    fill(store, steps, [2.0] * 5000)
    seen: list[int] = []
    cursor = 0
    for _ in range(20):
        bodies, nxt = telemetry_page(store.conn, "run_r", cursor, None, steps=(50, 2500))
        assert len(bodies) <= PAGE_LIMIT
        if not bodies:
            break
        seen += idx_of(bodies)
        assert nxt is not None and nxt > cursor
        cursor = nxt
    assert seen == wanted(steps, 50, 2500)
    store.close()


@pytest.mark.parametrize("max_points", [4, 20, 300])
def test_max_points_buckets_the_range_keeping_its_extremes(tmp_path: Path, max_points: int) -> None:
    store = Store(tmp_path / "t.db")
    n = 300_000
    steps = steps_of(n, {200_000: 150_000})
    losses = [3.0 - 1e-6 * i + 0.01 * math.sin(i / 7.0) for i in range(n)]
    # Inside the range: one spike in each pass over the rewound steps; outside: bigger ones.
    for i, loss in {160_123: 9.0, 210_000: 8.0, 140_000: 50.0, 250_000: -9.0}.items():
        losses[i] = loss
    fill(store, steps, losses)
    calls = 0

    def count() -> int:
        nonlocal calls
        calls += 1
        return 0

    store.conn.set_progress_handler(count, 1000)
    bodies, nxt = telemetry_page(store.conn, "run_r", 0, max_points, steps=(155_000, 175_000))
    store.conn.set_progress_handler(None, 0)
    items = [json.loads(b) for b in bodies]
    assert 0 < len(items) <= max_points and nxt == 10 + 2 * (n - 1)
    assert all(155_000 <= s["step"] <= 175_000 for s in items)
    assert [s["seq"] for s in items] == sorted(s["seq"] for s in items)
    inside = [losses[i] for i in wanted(steps, 155_000, 175_000)]
    got = [s["loss"] for s in items]
    assert max(got) == max(inside) == 9.0 and min(got) == min(inside)
    if max_points >= 20:
        assert 8.0 in got  # the rewound pass's spike is its bucket's extreme too
    # 40,000 samples in range: read through blocks, not row by row (a raw scan of them
    # alone costs far more virtual-machine steps than the whole query did).
    scanned = 0

    def count_scan() -> int:
        nonlocal scanned
        scanned += 1
        return 0

    store.conn.set_progress_handler(count_scan, 1000)
    store.conn.execute(
        "SELECT MIN(loss), MAX(loss) FROM telemetry WHERE run_id=? AND idx>=? AND idx<?",
        ("run_r", 155_000, 175_000),
    ).fetchone()
    store.conn.set_progress_handler(None, 0)
    if max_points <= 20:
        assert calls * 3 < scanned * 2, (calls, scanned)
    store.close()


def test_old_databases_get_their_segments_once(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = Store(path)
    steps = steps_of(3000, {2000: 10})
    fill(store, steps, [1.0] * 3000)
    store.conn.execute("DELETE FROM telemetry_segments")
    store.close()
    store = Store(path)
    bodies, _ = telemetry_page(store.conn, "run_r", 0, None, steps=(10, 12))
    assert idx_of(bodies) == wanted(steps, 10, 12)
    store.close()


def rolled_back_run(handle: SimHandle, client: httpx.Client) -> str:
    """A loss-spike run whose escalated spike was approved: rewound, then completed."""
    rid: str = create_run(client)["run_id"]
    run = wait_for(client, rid, lambda r: bool(r["pending_proposal_ids"]))
    for pid in run["pending_proposal_ids"]:
        answer = client.post(f"/v1/proposals/{pid}/approve", json={}, headers=key())
        assert answer.status_code == 200, answer.text
    wait_for(client, rid, lambda r: r["state"] == "completed", timeout=60)
    return rid


def all_samples(client: httpx.Client, rid: str, **params: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = 0
    while True:
        page = client.get(f"/v1/runs/{rid}/telemetry", params={**params, "since_seq": cursor})
        assert page.status_code == 200, page.text
        items = page.json()["items"]
        if not items:
            return out
        out += items
        cursor = page.json()["next_since_seq"]


def test_over_http_a_rewound_run_the_range_max_points_and_metric(sim_factory: Any) -> None:
    handle: SimHandle = sim_factory(scenario="loss-spike")
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = rolled_back_run(handle, client)
        everything = all_samples(client, rid)
        pretrain = [s for s in everything if s["stage"] == "pretrain"]
        repeats = [b["step"] for a, b in itertools.pairwise(pretrain) if b["step"] < a["step"]]
        assert repeats, "the approved rollback rewinds pretrain"
        back = repeats[0]
        lo, hi = back, back + 3 * (pretrain[1]["step"] - pretrain[0]["step"])
        ranged = all_samples(client, rid, from_step=lo, to_step=hi)
        assert ranged == [s for s in everything if lo <= s["step"] <= hi]
        twice = [s["step"] for s in ranged if s["stage"] == "pretrain"]
        assert len(twice) > len(set(twice)), "both passes over the rewound steps"
        name = "loss_metrics/global_max_loss"
        wide_lo, wide_hi = 0, max(s["step"] for s in pretrain)
        answer = client.get(
            f"/v1/runs/{rid}/telemetry",
            params={"from_step": wide_lo // 2 + 1, "to_step": wide_hi, "max_points": 40,
                    "metric": name},
        )  # fmt: skip
        page = TelemetryPage.model_validate(answer.json())
        assert 0 < len(page.items) <= 40
        assert all(wide_lo // 2 + 1 <= s.step <= wide_hi for s in page.items)
        assert all(set(s.metrics) <= {name} for s in page.items)
        in_range = [s for s in everything if wide_lo // 2 + 1 <= s["step"] <= wide_hi]
        if any(s["metrics"].get(name) == "NaN" for s in in_range):
            assert any(math.isnan(s.metrics.get(name) or 0.0) for s in page.items)


@pytest.mark.parametrize(
    "params",
    [
        {"from_step": 10, "to_step": 9},
        {"from_step": -1},
        {"to_step": "x"},
        {"from_step": 2**60},
    ],
)
def test_bad_ranges_are_400_request_invalid(sim: SimHandle, params: dict[str, Any]) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        answer = client.get(f"/v1/runs/{rid}/telemetry", params=params)
        assert answer.status_code == 400, answer.text
        assert answer.json()["code"] == "request.invalid"
        assert answer.headers["content-type"].startswith("application/problem+json")
        fine = client.get(f"/v1/runs/{rid}/telemetry", params={"from_step": 5, "to_step": 5})
        assert fine.status_code == 200
