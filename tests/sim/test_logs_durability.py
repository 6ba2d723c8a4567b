"""SIGKILL the real backend while a client follows the job log; restart it on the same
database and resume by seq: every line once, in order, nothing lost, none twice."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.simproc import SimProcess

from .helpers import REFERENCE_SPEC, wait_for
from .logs_support import lines_of, read_logs, seqs_of, whole_log

pytestmark = [pytest.mark.slow, pytest.mark.faults]

KEY = {"Idempotency-Key": "0f7d3c2a-61c4-4f0e-9a57-3b8e2d1c4a90"}
HEADERS = {"Authorization": "Bearer s3cret"}


def test_the_log_resumes_by_seq_across_kill_9_and_restarts(tmp_path: Path) -> None:
    proc = SimProcess(tmp_path / "desk.db", speed=150_000, scenario="showcase",
                      approval_speed=0)  # fmt: skip
    proc.start()
    try:
        with httpx.Client(base_url=proc.url, headers=HEADERS, timeout=10) as client:
            rid = client.post("/v1/runs", json=REFERENCE_SPEC, headers=KEY).json()["run_id"]
            _, first = read_logs(client, rid, params={"since_seq": 0},
                                 until=lambda got: len(got) >= 60)  # fmt: skip
        proc.kill()
        proc.restart()
        with httpx.Client(base_url=proc.url, headers=HEADERS, timeout=10) as client:
            mid = client.get(f"/v1/runs/{rid}").json()
            assert mid["state"] not in ("completed", "failed", "cancelled")
            last = str(lines_of(first)[-1].seq)
            _, second = read_logs(client, rid, headers={"Last-Event-ID": last},
                                  until=lambda got: len(got) >= 80)  # fmt: skip
        proc.kill()  # a second kill while the run goes on
        proc.restart()
        with httpx.Client(base_url=proc.url, headers=HEADERS, timeout=10) as client:
            last = str(lines_of(second)[-1].seq)
            _, third = read_logs(client, rid, headers={"Last-Event-ID": last})
            wait_for(client, rid, lambda r: r["state"] == "completed", timeout=30)
            stored = whole_log(client, rid)
            gone, _ = read_logs(client, rid, headers={"Last-Event-ID": str(stored[-1].seq)},
                                params={"tail": 5})  # fmt: skip
    finally:
        proc.stop()
    followed = lines_of(first) + lines_of(second) + lines_of(third)
    assert seqs_of(followed) == list(range(1, len(followed) + 1))
    assert followed == stored
    assert followed[-1].text.startswith("torchrun: job completed")
    assert len(lines_of(second)) == 80 and len(lines_of(third)) > 100
    assert gone == 204
