"""`ito-tui telemetry RUN`: the CSV and JSON lines of a desk_sim run equal the endpoint's
JSON value for value (NaN included), ranges and downsampling, bad flags, `| head`."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
from datetime import datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest

from ito_tui.state.export import FIXED, METRIC_PREFIX, columns, csv_rows
from tests.client.fakeserver import Conn, FakeServer, Received, capabilities_body
from tests.sim.test_telemetry_range import all_samples, rolled_back_run
from tests.tui import pipeline_fakes

from .conftest import ITO_TUI, subprocess_env

INTS = {"seq", "step", "tokens_seen", "interruptions_total", "checkpoint.last_step",
        "rl.max_staleness_steps"}  # fmt: skip


def wire(item: dict[str, Any], column: str) -> Any:
    """The endpoint item's value for a CSV column (None: absent or null)."""
    if column.startswith(METRIC_PREFIX):
        return (item.get("metrics") or {}).get(column[len(METRIC_PREFIX) :])
    value: Any = item
    for part in column.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def same(cell: str, value: Any, column: str) -> bool:
    """The CSV cell says the wire's value."""
    if value is None:
        return cell == ""
    if column == "ts":
        return datetime.fromisoformat(cell) == datetime.fromisoformat(value)
    if column == "spend_usd":
        return Decimal(cell) == Decimal(value)
    if column == "stage":
        return bool(cell == value)
    if column in INTS:
        return int(cell) == value
    if value in ("NaN", "Infinity", "-Infinity"):
        return cell == {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}[value]
    return float(cell) == float(value) and not math.isnan(float(cell))


def assert_csv_is(text: str, items: list[dict[str, Any]], names: list[str]) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == columns(names)
    assert len(rows) - 1 == len(items)
    for row, item in zip(rows[1:], items, strict=True):
        for cell, column in zip(row, rows[0], strict=True):
            assert same(cell, wire(item, column), column), (item["seq"], column, cell)


@pytest.fixture
def spiked(sim_factory, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    """A loss-spike run on desk_sim whose escalated spike (a NaN max loss) was approved:
    rewound, then completed; the CLI's backend."""
    sim = sim_factory(scenario="loss-spike", proposal_ttl_s=1e12)
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        return sim, rolled_back_run(sim, client)


def endpoint(sim: Any, run_id: str, **params: Any) -> list[dict[str, Any]]:
    with httpx.Client(base_url=sim.url, headers=sim.headers(), timeout=10) as client:
        if "max_points" in params:
            page = client.get(f"/v1/runs/{run_id}/telemetry", params=params)
            assert page.status_code == 200
            items: list[dict[str, Any]] = page.json()["items"]
            return items
        return all_samples(client, run_id, **params)


def test_the_csv_of_a_run_equals_the_endpoint_value_for_value(cli, spiked) -> None:
    sim, run_id = spiked
    items = endpoint(sim, run_id)
    names = sorted({n for item in items for n in item["metrics"]})
    assert any("NaN" in item["metrics"].values() for item in items), "the spike's NaN"
    r = cli("telemetry", run_id)
    assert r.code == 0, r.err
    assert r.err == ""
    assert_csv_is(r.out, items, names)
    assert "nan" in r.out
    assert cli("telemetry", run_id, "--csv").out == r.out


def test_json_lines_equal_the_endpoint_items(cli, spiked) -> None:
    sim, run_id = spiked
    items = endpoint(sim, run_id)
    r = cli("telemetry", run_id, "--json")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) == len(items)
    for line, item in zip(lines, items, strict=True):
        assert line.isascii()
        got = json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
        for key, value in item.items():
            if key == "ts":
                assert datetime.fromisoformat(got[key]) == datetime.fromisoformat(value)
            elif key == "spend_usd":
                assert Decimal(got[key]) == Decimal(value)
            elif isinstance(value, dict):
                assert {k: got[key][k] for k in value} == value, key
            else:
                assert got[key] == value, key
    assert '"NaN"' in r.out


def test_a_range_with_max_points_and_metrics(cli, spiked) -> None:
    sim, run_id = spiked
    everything = endpoint(sim, run_id)
    steps = sorted({s["step"] for s in everything})
    lo, hi = steps[len(steps) // 4], steps[len(steps) // 2]
    names = ["loss_metrics/global_max_loss", "grad_norm"]
    flags = [f"--metric={n}" for n in names]
    r = cli("telemetry", run_id, "--from-step", str(lo), "--to-step", str(hi), *flags)
    assert r.code == 0, r.err
    ranged = endpoint(sim, run_id, from_step=lo, to_step=hi, metric=names)
    assert ranged and all(lo <= s["step"] <= hi for s in ranged)
    assert_csv_is(r.out, ranged, names)
    r = cli("telemetry", run_id, "--from-step", str(lo), "--to-step", str(hi),
            "--max-points", "12", *flags)  # fmt: skip
    assert r.code == 0, r.err
    down = endpoint(sim, run_id, from_step=lo, to_step=hi, metric=names, max_points=12)
    assert 0 < len(down) <= 12
    assert_csv_is(r.out, down, names)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("--from-step", "9", "--to-step", "3"), "--to-step 3 is below --from-step 9"),
        (("--from-step", "-1"), "must be 0 or more"),
        (("--max-points", "1"), "must be 2 or more"),
        (("--csv", "--json"), "not allowed with argument"),
    ],
)
def test_bad_flags_are_usage_errors(cli, argv: tuple[str, ...], says: str) -> None:
    r = cli("telemetry", "run_x", *argv)
    assert r.code == 2 and says in r.err, r.err


def test_the_export_rows_are_what_csv_rows_gives(cli, spiked) -> None:
    """The CLI's fast path and `csv_rows` (the inspector's) write the same values (a
    float's text may differ: `1e+16` for `1e16`, `0.00003` for `3e-05`)."""
    from ito_tui.contract import TelemetrySample

    sim, run_id = spiked
    items = endpoint(sim, run_id, max_points=50)
    names = sorted({n for item in items for n in item["metrics"]})
    samples = [TelemetrySample.model_validate(item) for item in items]
    r = cli("telemetry", run_id, "--max-points", "50")
    assert r.code == 0, r.err
    got = list(csv.reader(io.StringIO(r.out)))
    assert got[0] == columns(names)
    for row, expected in zip(got[1:], csv_rows(samples, names), strict=True):
        for a, b in zip(row, expected, strict=True):
            assert a == b or float(a) == float(b), (a, b)


def test_a_reader_that_goes_away_ends_it_quietly(spiked) -> None:
    sim, run_id = spiked
    env = subprocess_env(ITO_BACKEND_URL=sim.url, ITO_TOKEN=sim.token)
    shell = f"'{ITO_TUI}' telemetry {run_id} | head -n 3"
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", shell],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert len(r.stdout.splitlines()) == 3 and r.stdout.startswith(",".join(FIXED[:3]))
    assert r.stderr == "" and r.returncode in (0, 141), (r.returncode, r.stderr)


def test_a_backend_that_ignores_the_range_is_an_error_naming_it(cli, monkeypatch) -> None:
    server = FakeServer().start()

    async def caps(req: Received, conn: Conn) -> None:
        await conn.json(200, capabilities_body())

    async def telemetry(req: Received, conn: Conn) -> None:
        at = datetime.fromisoformat("2026-11-29T00:00:00+00:00")
        items = [pipeline_fakes.sample(k, 10 * k, at, 3.2) for k in (1, 2, 3)]
        await conn.json(200, {"items": items, "next_since_seq": 3})

    server.routes.update(
        {("GET", "/v1/capabilities"): caps, ("GET", "/v1/runs/run_1/telemetry"): telemetry}
    )
    monkeypatch.setenv("ITO_BACKEND_URL", server.url)
    monkeypatch.setenv("ITO_TOKEN", "tok-range-1")
    try:
        r = cli("telemetry", "run_1", "--from-step", "15", "--to-step", "25", "--metric", "lr")
        assert r.code == 1, r.err
        assert "item 0 has step 10, asked for steps 15..25" in r.err
        assert r.out.count("\n") <= 1  # the header at most, no sample
        asked = [q.query for q in server.received if q.path.endswith("/telemetry")]
        assert asked and asked[0]["from_step"] == ["15"] and asked[0]["to_step"] == ["25"]
    finally:
        server.stop()
