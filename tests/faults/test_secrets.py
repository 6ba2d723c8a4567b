"""Secrets: known test tokens never reach snapshots or screenshots; the simulator compares
tokens in constant time and never logs them."""

from __future__ import annotations

import hmac
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[2]
KNOWN_TEST_TOKENS = (
    "s3cret", "hunter2", "tok-5f0e9c1d-do-not-leak", "tok-hygiene-7f3a9c1e5b", "tok-evil",
)  # fmt: skip


def test_no_known_token_in_snapshot_svgs_or_screenshots() -> None:
    images = [
        *ROOT.joinpath("tests").rglob("__snapshots__/**/*.svg"),
        *ROOT.joinpath("screenshots").rglob("*.svg"),
    ]
    assert len(images) > 10, "no snapshots found: the search is looking in the wrong place"
    for image in images:
        text = image.read_text(errors="replace")
        for token in KNOWN_TEST_TOKENS:
            assert token not in text, (image, token)


def test_simulator_compares_every_token_in_constant_time(
    sim: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    for token, status in (("s3cret", 200), ("hunter2", 200), ("wrong", 401), ("s3cre", 401)):
        calls.clear()
        r = httpx.get(f"{sim.url}/v1/whoami", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == status
        # Every configured token is compared, with no early exit on a match.
        assert len(calls) == len(sim.tokens), calls
        assert token not in r.text


def test_simulator_never_logs_tokens(
    sim_factory: Any, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    handle = sim_factory(tokens={"tok-sim-logs-9d8c7b": "alice"})
    for token in ("tok-sim-logs-9d8c7b", "tok-sim-logs-wrong-1a2b"):
        for path in ("/v1/whoami", "/v1/bookings", "/v1/runs/run_nope", "/v1/nope"):
            httpx.get(f"{handle.url}{path}", headers={"Authorization": f"Bearer {token}"})
        httpx.post(
            f"{handle.url}/v1/runs",
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "k1"},
            content=b"{not json",
        )
    out, err = capfd.readouterr()
    logged = "\n".join(r.getMessage() for r in caplog.records) + out + err
    assert "tok-sim-logs" not in logged
