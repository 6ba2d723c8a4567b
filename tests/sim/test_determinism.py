"""Same seed and spec, same event sequence: checked run against run and against golden files.

Regenerate the golden files after an intended change with
`ITO_UPDATE_GOLDEN=1 pytest tests/sim/test_determinism.py`.
"""

from __future__ import annotations

import os
from itertools import groupby
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import create_run, read_events, spec

GOLDEN = Path(__file__).parent / "golden"
SCENARIOS = [
    "showcase",
    "happy",
    "gate-fail",
    "loss-spike",
    "node-failure",
    "budget",
    "straggler",
    "hang",
]


def type_sequence(sim_factory: Any, scenario: str, seed: int) -> list[str]:
    handle = sim_factory(scenario=scenario, seed=seed, approval_speed=None)
    with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
        body = spec(budget_usd="20000") if scenario == "budget" else spec()
        rid = create_run(client, body)["run_id"]
        _, events = read_events(client, rid)
    return [str(m.event) for m in events]


def encode(types: list[str]) -> str:
    """Run-length encoded, one line per run of equal types: `telemetry x12`."""
    lines = []
    for type_, group in groupby(types):
        n = len(list(group))
        lines.append(type_ if n == 1 else f"{type_} x{n}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_event_type_sequence_matches_the_golden_file(sim_factory: Any, scenario: str) -> None:
    first = type_sequence(sim_factory, scenario, seed=7)
    golden = GOLDEN / f"{scenario}.txt"
    if os.environ.get("ITO_UPDATE_GOLDEN"):
        golden.write_text(encode(first))
    assert encode(first) == golden.read_text()


def test_same_seed_gives_the_same_sequence_in_a_fresh_backend(sim_factory: Any) -> None:
    handles = [sim_factory(scenario="showcase", seed=3, approval_speed=None) for _ in range(2)]
    bodies: list[list[dict[str, Any]]] = []
    for handle in handles:
        with httpx.Client(base_url=handle.url, headers=handle.headers(), timeout=10) as client:
            rid = create_run(client)["run_id"]
            _, events = read_events(client, rid)
            bodies.append([_stable(m.envelope) for m in events])
    assert bodies[0] == bodies[1]


def _stable(envelope: dict[str, Any]) -> dict[str, Any]:
    """The parts of an event that depend only on (seed, spec, scenario): no ids, no clocks."""
    data = envelope["data"]
    keep: dict[str, Any] = {"seq": envelope["seq"], "type": envelope["type"]}
    if envelope["type"] == "telemetry":
        keep.update(step=data["step"], loss=data["loss"], tokens=data["tokens_seen"])
    elif envelope["type"] == "gate.result":
        keep.update(result=data["result"])
    return keep
