"""Open metrics (API.md v1.1): `metrics{}` on every sample, `GET …/telemetry?metric=`."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx

from ito_tui.contract import TelemetryPage
from tests.support.servers import SimHandle

from .helpers import create_run, read_events

TORCHTITAN = {
    "loss_metrics/global_avg_loss",
    "loss_metrics/global_max_loss",
    "grad_norm",
    "throughput(tps)",
    "tflops",
    "memory/max_active(GiB)",
    "memory/max_reserved(%)",
    "memory/num_alloc_retries",
    "time_metrics/end_to_end(s)",
    "time_metrics/data_loading(%)",
    "lr",
}
MAX_LOSS = "loss_metrics/global_max_loss"


def _finished(handle: SimHandle) -> tuple[str, list[dict[str, Any]], list[str]]:
    """A finished run's id, its telemetry samples and their raw `data:` texts."""
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        rid = create_run(client)["run_id"]
        _, messages = read_events(client, rid)
    telemetry = [m for m in messages if m.event == "telemetry"]
    return rid, [m.envelope["data"] for m in telemetry], [m.data for m in telemetry]


def _rank(value: Any) -> float:
    return math.inf if value == "NaN" else float(value)


def test_every_sample_carries_torchtitans_names_and_a_diverged_rank_is_nan(
    sim_factory: Any,
) -> None:
    handle = sim_factory(scenario="showcase", approval_speed=None)
    rid, samples, raw = _finished(handle)
    assert samples and all(set(s["metrics"]) >= TORCHTITAN for s in samples)
    for sample in samples:
        metrics = sample["metrics"]
        assert metrics["loss_metrics/global_avg_loss"] == sample["loss"]
        assert ("mfu(%)" in metrics) == (sample["mfu_frac"] is not None)
    assert any("validation_metrics/loss" in s["metrics"] for s in samples)
    assert not all("validation_metrics/loss" in s["metrics"] for s in samples)
    rlvr = [s for s in samples if s["stage"] == "rlvr"]
    assert not rlvr or all("reward/mean" in s["metrics"] for s in rlvr)
    # The escalated spike (z 14.8): one rank diverged, max loss is NaN, as the string.
    nan = [s for s in samples if s["metrics"][MAX_LOSS] == "NaN"]
    assert [s["loss_z"] for s in nan] == [14.8]
    assert f'"{MAX_LOSS}":"NaN"' in next(r for r in raw if '"NaN"' in r)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        page = client.get(f"/v1/runs/{rid}/telemetry", params={"metric": MAX_LOSS}).json()
        few = client.get(
            f"/v1/runs/{rid}/telemetry", params={"metric": MAX_LOSS, "max_points": 12}
        ).json()
    assert "NaN" not in json.dumps(page).replace('"NaN"', "")  # never a bare NaN token
    assert [i["metrics"][MAX_LOSS] for i in page["items"]].count("NaN") == 1
    # Downsampled to 12 points, the NaN still shows: it takes its bucket's max slot.
    assert len(few["items"]) <= 12
    assert "NaN" in [i["metrics"].get(MAX_LOSS) for i in few["items"]]


def test_metric_filters_and_buckets_keep_each_metrics_extremes_and_the_last_sample(
    sim_factory: Any,
) -> None:
    handle = sim_factory()
    rid, samples, _raw = _finished(handle)
    names = ["tflops", "time_metrics/data_loading(%)"]
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        full = client.get(f"/v1/runs/{rid}/telemetry", params={"metric": names}).json()
        plain = client.get(f"/v1/runs/{rid}/telemetry").json()
        few = client.get(
            f"/v1/runs/{rid}/telemetry", params={"metric": names, "max_points": 40}
        ).json()
        too_many = client.get(
            f"/v1/runs/{rid}/telemetry", params={"metric": [f"m{i}" for i in range(17)]}
        )
    TelemetryPage.model_validate(few)
    assert len(samples) > 100
    # Without metric= a page is the samples as sent; with it, only the names asked for.
    assert [i["metrics"] for i in plain["items"]] == [s["metrics"] for s in samples]
    assert all(set(i["metrics"]) == set(names) for i in full["items"])
    assert [i["metrics"] for i in full["items"]] == [
        {n: s["metrics"][n] for n in names} for s in samples
    ]
    by_seq = {s["seq"]: s for s in samples}
    items = few["items"]
    assert len(items) <= 40 and [i["seq"] for i in items] == sorted(i["seq"] for i in items)
    for item in items:  # real samples, not blends of several
        assert item["metrics"] == {n: by_seq[item["seq"]]["metrics"][n] for n in names}
        assert item["loss"] == by_seq[item["seq"]]["loss"]
    kept = {i["seq"] for i in items}
    assert samples[-1]["seq"] in kept
    n, buckets = len(samples), (40 - 1) // (2 * (len(names) + 1))
    for b in range(buckets):
        chunk = [s for j, s in enumerate(samples) if j * buckets // n == b]
        shown = [s for s in chunk if s["seq"] in kept]
        for name in names:
            values = [_rank(s["metrics"][name]) for s in chunk]
            at = [_rank(s["metrics"][name]) for s in shown]
            assert min(values) in at and max(values) in at, (b, name)
    assert too_many.status_code == 422 and too_many.json()["code"] == "validation.failed"
