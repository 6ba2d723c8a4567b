"""Smoke test of the benchmark suite: it imports, runs its cheapest benchmark in quick mode,
and writes a well-formed results file. Never asserts on wall time or on a figure."""

from __future__ import annotations

import importlib.util
import json
import math
import struct
import sys
from pathlib import Path

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


def test_quick_throughput_writes_a_well_formed_record(tmp_path: Path) -> None:
    assert main(["--quick", "--out", str(tmp_path), "throughput"]) == 0
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


def test_a_run_measures_ito_tui_byte_compiled(tmp_path: Path) -> None:
    # With PYTHONDONTWRITEBYTECODE set, nothing else writes the .pyc files of an
    # editable install, and every measured start would compile the changed modules.
    assert main(["--quick", "--out", str(tmp_path), "throughput"]) == 0
    stale = []
    for source in (ROOT / "ito_tui").rglob("*.py"):
        compiled = Path(importlib.util.cache_from_source(str(source)))
        # What the import system checks before it uses a .pyc: the source's mtime and size.
        st = source.stat()
        header = compiled.read_bytes()[8:16] if compiled.exists() else b""
        if header != struct.pack("<II", int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF):
            stale.append(str(source.relative_to(ROOT)))
    assert stale == []
