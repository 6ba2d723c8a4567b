"""Smoke test of the benchmark suite: it imports, runs its cheapest benchmark in quick mode,
and writes a well-formed results file. Never asserts on wall time or on a figure."""

from __future__ import annotations

import importlib.util
import json
import math
import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.__main__ import BENCHMARKS, main  # noqa: E402
from bench.b_throughput import TARGET  # noqa: E402


def test_every_benchmark_module_imports() -> None:
    import importlib

    for module, ids, desc in BENCHMARKS.values():
        assert ids and desc
        importlib.import_module(f"bench.{module}")


def test_quick_throughput_writes_a_well_formed_record_measuring_byte_compiled(
    tmp_path: Path,
) -> None:
    assert main(["--quick", "--out", str(tmp_path), "throughput"]) == 0
    # With PYTHONDONTWRITEBYTECODE set, nothing else writes the .pyc files of an
    # editable install, and every measured start would compile the changed modules.
    stale = []
    for source in (ROOT / "ito_tui").rglob("*.py"):
        compiled = Path(importlib.util.cache_from_source(str(source)))
        # What the import system checks before it uses a .pyc: the source's mtime and size.
        st = source.stat()
        header = compiled.read_bytes()[8:16] if compiled.exists() else b""
        if header != struct.pack("<II", int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF):
            stale.append(str(source.relative_to(ROOT)))
    assert stale == []
    files = list(tmp_path.glob("*-quick.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert doc["quick"] is True
    (rec,) = doc["records"]
    assert rec["id"] == 10 and rec["name"] == "throughput"
    assert rec["unit"] == "events/s"
    value = rec["value"]
    assert len(value["runs"]) >= 5
    assert value["min"] <= value["median"] <= value["max"]
    assert all(math.isfinite(v) and v > 0 for v in value["runs"])
    # The verdict is the median against the target the record names (not just any bool).
    assert rec["target"] == f"≥ {TARGET:,.0f} events/s"
    assert rec["met"] is (value["median"] >= TARGET)


@pytest.mark.long(seconds=15)
def test_quick_logs_cli_writes_its_18_16_record(tmp_path: Path) -> None:
    from bench.b_logs_cli import TARGET as LINES_TARGET

    assert main(["--quick", "--out", str(tmp_path), "logs_cli"]) == 0
    (rec,) = json.loads(next(tmp_path.glob("*-quick.json")).read_text())["records"]
    assert (rec["id"], rec["sub"], rec["name"], rec["unit"]) == (18, ".16", "logs_cli", "lines/s")
    value, base = rec["value"], rec["baseline"]
    assert len(value["runs"]) >= 2 and len(base["runs"]) == len(value["runs"])
    assert all(math.isfinite(v) and v > 0 for v in value["runs"] + base["runs"])
    assert rec["met"] is (value["median"] >= LINES_TARGET)
    assert rec["ratio"] == value["median"] / base["median"]


def test_the_proxys_flood_and_fleet_are_what_the_client_accepts(sim_factory, serve_asgi) -> None:
    """What 18.13-18.15 show the app is valid v1.1 data: the client reads the proxy's log
    (tail, exact resume, a truncation past retention, pages) and its 128-node fleet."""
    import asyncio

    import httpx
    from pydantic import SecretStr

    from bench.rate_server import LOG_RETENTION, RateServer, make_app
    from ito_tui.client import ItoClient
    from ito_tui.contract import LogTruncated
    from tests.sim.helpers import create_run

    sim = sim_factory()
    with httpx.Client(base_url=sim.url, headers=sim.headers()) as c:
        run_id = str(create_run(c)["run_id"])
    server = RateServer(sim.url, run_id, 0.0, 1000, log_rate=50_000.0, fleet_nodes=128)
    url = serve_asgi(make_app(server))

    async def read(stream: object, n: int) -> list[object]:
        out = []
        async for item in stream:  # type: ignore[attr-defined]
            out.append(item)
            if len(out) == n:
                break
        await stream.aclose()  # type: ignore[attr-defined]
        return out

    async def check() -> None:
        async with ItoClient(url, token=SecretStr(sim.token)) as client:
            first, second = await client.fleet(run_id), await client.fleet(run_id)
            assert len(first.nodes) == 128 and all(len(n.gpus) == 8 for n in first.nodes)
            assert first.nodes[0].gpus != second.nodes[0].gpus  # a new sample per request
            lines = await read(await client.logs(run_id, tail=50), 500)
            seqs = [line.seq for line in lines]  # type: ignore[attr-defined]
            assert seqs == list(range(seqs[0], seqs[0] + 500))
            again = await read(await client.logs(run_id, since_seq=seqs[-1]), 3)
            assert [x.seq for x in again] == [seqs[-1] + 1, seqs[-1] + 2, seqs[-1] + 3]  # type: ignore[attr-defined]
            await asyncio.sleep((LOG_RETENTION + 10_000) / 50_000)
            old = await read(await client.logs(run_id, since_seq=seqs[-1]), 2)
            assert isinstance(old[0], LogTruncated) and old[0].dropped > 0
            page = await client.log_page(run_id, limit=20)
            assert len(page.items) == 20 and page.next_before_seq == page.items[0].seq

    asyncio.run(check())


def test_quick_telemetry_cli_writes_its_19_record(tmp_path: Path) -> None:
    from bench.b_telemetry_cli import TARGET as ROWS_TARGET

    assert main(["--quick", "--out", str(tmp_path), "telemetry_cli"]) == 0
    (rec,) = json.loads(next(tmp_path.glob("*-quick.json")).read_text())["records"]
    assert (rec["id"], rec["name"], rec["unit"]) == (19, "telemetry_cli", "rows/s")
    value, base = rec["value"], rec["baseline"]
    assert len(value["runs"]) >= 2 and len(base["runs"]) == len(value["runs"])
    assert all(math.isfinite(v) and v > 0 for v in value["runs"] + base["runs"])
    assert rec["met"] is (value["median"] >= ROWS_TARGET)


def test_the_telemetry_servers_samples_are_what_the_client_accepts(serve_asgi) -> None:
    """What #19 exports is valid telemetry: every page through both of the client's
    reads (models and checked dicts), seq after seq, NaN where it says, the range kept."""
    import asyncio

    from pydantic import SecretStr

    from bench.telemetry_server import NAN_EVERY, RUN_ID, TelemetryServer, make_app
    from ito_tui.client import ItoClient

    n = NAN_EVERY + 5
    url = serve_asgi(make_app(TelemetryServer(n, 4_000)))

    async def check() -> None:
        async with ItoClient(url, token=SecretStr("bench-token")) as client:
            seqs: list[int] = []
            cursor = None
            while True:
                page = await client.telemetry_dicts(RUN_ID, since_seq=cursor)
                if not page["items"]:
                    break
                models = await client.telemetry(RUN_ID, since_seq=cursor)
                assert [s.seq for s in models.items] == [s["seq"] for s in page["items"]]
                seqs += [s["seq"] for s in page["items"]]
                cursor = page["next_since_seq"]
            assert seqs == list(range(1, n + 1))
            ranged = await client.telemetry(RUN_ID, from_step=NAN_EVERY, to_step=NAN_EVERY)
            (spike,) = ranged.items
            assert math.isnan(spike.metrics["loss_metrics/global_max_loss"] or 0.0)
            survey = await client.telemetry(RUN_ID, max_points=50)
            assert 0 < len(survey.items) <= 50 and len(survey.items[0].metrics) == 12

    asyncio.run(check())
