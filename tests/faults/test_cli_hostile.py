"""The CLI against a hostile backend: 401 mid-stream exits 7 once; stale decisions refused."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient
from tests.tui.pipeline_live import start_run

from .conftest import Tampered
from .hostile import raw_controls, run_cli
from .test_injection import pending_proposal

pytestmark = [pytest.mark.faults, pytest.mark.slow]
SPEED = 20_000.0


def test_watch_exits_7_when_the_token_is_revoked_mid_stream(
    tampered: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    run_id = asyncio.run(start_run(t.url, "happy"))
    t.tamper.revoke_after_events(12)
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    started = time.monotonic()
    code, out, err = run_cli(capsys, monkeypatch, "--backend", t.url, "watch", run_id)
    assert code == 7, err[-1000:]
    assert t.tamper.revoked_at is not None
    # It stopped at the first 401: one request (the snapshot re-read that follows a cut
    # stream, or the reconnect), no loop, no long wait.
    after = t.tamper.after_revocation()
    assert len(after) == 1 and after[0][1].startswith(f"/v1/runs/{run_id}"), after
    assert time.monotonic() - started < 20
    assert len([line for line in out.splitlines() if line.strip()]) >= 12
    assert "s3cret" not in out + err and raw_controls(out + err) == []


def test_decisions_on_an_expired_proposal_or_a_finished_run_are_refused(
    sim_factory: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory(scenario="loss-spike", approval_speed=4000.0, proposal_ttl_s=2000.0)
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    # Expired: nobody answered within its time to live.
    expiring = asyncio.run(start_run(sim.url, "loss-spike"))
    proposal = asyncio.run(pending_proposal(sim.url, expiring))

    async def expired() -> bool:
        async with ItoClient(sim.url, token=SecretStr("s3cret")) as client:
            for _ in range(400):
                mine = [p for p in await client.proposals(expiring)]
                if any(
                    p.proposal_id == proposal.proposal_id and p.status == "expired" for p in mine
                ):
                    return True
                await asyncio.sleep(0.05)
        return False

    assert asyncio.run(expired())
    code, out, err = run_cli(capsys, monkeypatch, "approve", proposal.proposal_id, "--yes")
    assert code == 9, (code, out, err)
    assert "expired" in out + err and "nothing to decide" in err
    # Finished: the run was cancelled while its proposal waited.
    # Fast enough that the cancel completes at once, slow enough (4 h to live) that
    # the proposal is still pending when the decision arrives.
    slow = sim_factory(scenario="loss-spike", approval_speed=100.0)
    monkeypatch.setenv("ITO_BACKEND_URL", slow.url)
    paused = asyncio.run(start_run(slow.url, "loss-spike"))
    waiting = asyncio.run(pending_proposal(slow.url, paused))
    code, _, err = run_cli(capsys, monkeypatch, "cancel", paused, "--yes")
    assert code == 0, err
    code, _, err = run_cli(capsys, monkeypatch, "watch", paused)
    assert code == 5, err
    code, out, err = run_cli(capsys, monkeypatch, "approve", waiting.proposal_id, "--yes")
    assert code == 9, (code, out, err)
    assert "not recorded" in err or "nothing to decide" in err, err

    async def decided() -> list[Any]:
        async with ItoClient(slow.url, token=SecretStr("s3cret")) as client:
            return [p for p in await client.proposals(paused) if p.status == "approved"]

    assert asyncio.run(decided()) == []
