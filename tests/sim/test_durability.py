"""SIGKILL the real backend mid-run, restart it on the same database: nothing is lost."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.simproc import SimProcess

from .helpers import REFERENCE_SPEC, read_events, seqs, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.faults]

KEY = {"Idempotency-Key": "5b0c1c7e-2f51-4a8e-9d3b-6a1f0c2d9e11"}


def test_kill_9_mid_run_then_restart_finishes_with_gap_free_events(tmp_path: Path) -> None:
    proc = SimProcess(tmp_path / "desk.db", speed=150_000, scenario="showcase",
                      approval_speed=0)  # fmt: skip
    proc.start()
    try:
        headers = {"Authorization": "Bearer s3cret"}
        with httpx.Client(base_url=proc.url, headers=headers, timeout=10) as client:
            created = client.post("/v1/runs", json=REFERENCE_SPEC, headers=KEY)
            rid = created.json()["run_id"]
            _, before = read_events(client, rid, stop_after=120)
            assert seqs(before) == list(range(1, 121))
        proc.kill()
        proc.restart()
        with httpx.Client(base_url=proc.url, headers=headers, timeout=10) as client:
            replay = client.post("/v1/runs", json=REFERENCE_SPEC, headers=KEY)
            assert replay.headers["idempotent-replayed"] == "true"
            assert replay.json()["run_id"] == rid
            mid = client.get(f"/v1/runs/{rid}").json()
            assert mid["last_event_seq"] >= 120
            assert mid["state"] not in ("completed", "failed", "cancelled")
            _, head = read_events(client, rid, stop_after=60, params={"since_seq": 120})
        proc.kill()  # a second kill while reading
        proc.restart()
        with httpx.Client(base_url=proc.url, headers=headers, timeout=10) as client:
            done = wait_for(client, rid, lambda r: r["state"] == "completed", timeout=30)
            _, everything = read_events(client, rid)
            assert [r["run_id"] for r in client.get("/v1/runs").json()["items"]] == [rid]
    finally:
        proc.stop()
    numbers = seqs(everything)
    assert numbers == list(range(1, len(numbers) + 1))
    assert numbers[-1] == done["last_event_seq"]
    assert everything[-1].event == "run.completed"
    assert [m.data for m in everything[:120]] == [m.data for m in before]
    assert [m.data for m in everything[120 : 120 + len(head)]] == [m.data for m in head]
    types = [m.event for m in everything]
    assert types.count("run.accepted") == 1 and types.count("run.completed") == 1


def test_a_second_simulator_on_the_same_database_refuses_to_start(tmp_path: Path) -> None:
    first = SimProcess(tmp_path / "desk.db")
    first.start()
    try:
        second = subprocess.run(
            SimProcess(tmp_path / "desk.db").argv(), capture_output=True, text=True, timeout=30,
            env={**os.environ, "ITO_SIM_TOKENS": "alice:s3cret"},
        )  # fmt: skip
        assert second.returncode == 2
        assert "in use by another simulator" in second.stderr and second.stdout == ""
        assert httpx.get(f"{first.url}/v1/capabilities").status_code == 200
    finally:
        first.stop()
