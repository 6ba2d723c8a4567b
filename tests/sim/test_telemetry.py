"""Server-side telemetry downsampling: min/max preserving, and fast at a million samples."""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest

from ito_tui.contract import TelemetryPage
from ito_tui.desk_sim.store import Store
from ito_tui.desk_sim.telemetry import telemetry_page
from tests.support.servers import SimHandle

from .helpers import create_run, wait_for


def fill(store: Store, n: int, spikes: dict[int, float]) -> list[float]:
    losses = [3.0 - 1e-6 * i + 0.01 * math.sin(i / 7.0) for i in range(n)]
    for i, loss in spikes.items():
        losses[i] = loss
    with store.tx():
        for start in range(0, n, 100_000):
            store.add_telemetry(
                "run_big",
                [(i, 10 + 2 * i, losses[i], f'{{"seq":{10 + 2 * i},"loss":{losses[i]!r}}}')
                 for i in range(start, min(n, start + 100_000))],
            )  # fmt: skip
    return losses


def test_a_million_samples_downsample_keeping_the_extremes(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    n = 1_000_000
    spikes = {123_457: 9.5, 777_001: 0.25, 999_999: 7.0}
    losses = fill(store, n, spikes)
    # Speed is measured by bench #12 (a ratio in the same run), not asserted here.
    bodies, cursor = telemetry_page(store.conn, "run_big", 0, 400)
    items = [json.loads(b) for b in bodies]
    assert 200 <= len(items) <= 400
    assert cursor == 10 + 2 * (n - 1)
    got = [s["loss"] for s in items]
    assert max(got) == 9.5 and min(got) == 0.25 and 7.0 in got
    assert [s["seq"] for s in items] == sorted(s["seq"] for s in items)
    # Each bucket keeps its own extremes: the first bucket's max is the series' first values.
    assert max(losses[: n // 200]) in got
    bodies, _ = telemetry_page(store.conn, "run_big", 10 + 2 * 999_000, 100)
    tail = [json.loads(b)["loss"] for b in bodies]
    assert len(tail) <= 100 and 7.0 in tail and max(losses[999_001:]) in tail
    store.close()


@pytest.mark.parametrize("start", [0, 1, 63, 65, 1023, 1025, 70_001])
def test_extremes_survive_every_tier_boundary(tmp_path: Path, start: int) -> None:
    """Bucket extremes in the raw head, the 64-sample blocks and the 1024-sample blocks.

    20 points make 10 buckets of at least 1,024 samples, so all three tiers are read;
    each spike is the extreme of its own bucket and must come back.
    """
    store = Store(tmp_path / "t.db")
    n = 120_000
    spikes = {start + 3: 11.0, start + 70: -3.0, 30_001: 12.0, 60_000: -4.0, n - 2: 13.0}
    losses = fill(store, n, spikes)
    bodies, _ = telemetry_page(store.conn, "run_big", 10 + 2 * start - 1, 20)
    got = [json.loads(b)["loss"] for b in bodies]
    assert len(got) <= 20
    window = losses[start:]
    assert max(got) == max(window) and min(got) == min(window)
    for i, loss in spikes.items():
        if i >= start:
            assert loss in got, (i, loss)
    store.close()


def test_superblocks_are_backfilled_for_an_older_database(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = Store(path)
    fill(store, 100_000, {50_000: 20.0, 90_000: -5.0})
    store.conn.execute("DELETE FROM telemetry_blocks_1k")
    store.close()
    store = Store(path)  # opening rebuilds the coarse level from the fine one
    bodies, _ = telemetry_page(store.conn, "run_big", 0, 20)
    got = [json.loads(b)["loss"] for b in bodies]
    assert 20.0 in got and -5.0 in got
    store.close()


@pytest.mark.parametrize("max_points", [2, 7, 64, 1000])
def test_small_ranges_downsample_from_raw_rows(tmp_path: Path, max_points: int) -> None:
    store = Store(tmp_path / "t.db")
    losses = fill(store, 5_000, {1234: 50.0, 4321: -1.0})
    bodies, _ = telemetry_page(store.conn, "run_big", 0, max_points)
    got = [json.loads(b)["loss"] for b in bodies]
    assert len(got) <= max_points and 50.0 in got and -1.0 in got
    assert len(losses) == 5_000
    store.close()


def test_telemetry_over_http_pages_and_downsamples(sim: SimHandle) -> None:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        wait_for(client, rid, lambda r: r["state"] == "completed")
        raw = TelemetryPage.model_validate(client.get(f"/v1/runs/{rid}/telemetry").json())
        losses = [s.loss for s in raw.items]
        down = TelemetryPage.model_validate(
            client.get(f"/v1/runs/{rid}/telemetry", params={"max_points": 30}).json()
        )
        assert len(down.items) <= 30
        got = [s.loss for s in down.items]
        assert max(got) == max(losses) and min(got) == min(losses)
        assert down.next_since_seq == raw.items[-1].seq
