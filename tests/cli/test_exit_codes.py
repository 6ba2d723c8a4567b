"""Every exit code the CLI documents, produced against a real desk_sim (or no server)."""

from __future__ import annotations

import json
import socket

import pytest

from .test_commands import SPEC


@pytest.fixture
def as_alice(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def use(handle) -> None:  # type: ignore[no-untyped-def]
        monkeypatch.setenv("ITO_BACKEND_URL", handle.url)
        monkeypatch.setenv("ITO_TOKEN", handle.token)

    return use


def test_scaffold_backend_exits_6_naming_runs_create(cli, sim_factory, as_alice) -> None:  # type: ignore[no-untyped-def]
    as_alice(sim_factory(mode="scaffold"))
    r = cli("train", *SPEC, "--yes")
    assert r.code == 6
    assert "runs.create" in r.err
    assert "run_" not in r.out


def test_failed_gate_exits_3(cli, sim, as_alice) -> None:  # type: ignore[no-untyped-def]
    as_alice(sim)
    r = cli("train", *SPEC, "--yes", "--watch", "--scenario", "gate-fail")
    assert r.code == 3, r.err
    assert "gate.failed" in r.out
    run_id = next(line for line in r.out.splitlines() if line.startswith("run_"))
    assert cli("watch", run_id).code == 3  # a finished run: exits with its outcome at once
    status = cli("status", run_id)
    assert status.code == 0 and "gate_failed" in status.out and "mid_train" in status.out


def test_refused_submission_exits_9_with_the_reason(cli, sim, as_alice) -> None:  # type: ignore[no-untyped-def]
    as_alice(sim)
    est = cli("estimate", *SPEC, "--scenario", "refused", "--json")
    assert est.code == 9
    refusals = json.loads(est.out)["refusals"]
    assert refusals
    r = cli("train", *SPEC, "--yes", "--scenario", "refused")
    assert r.code == 9
    text = r.out + r.err
    assert "not submitted" in r.err
    for refusal in refusals:
        assert refusal["code"] in text
        assert refusal["reason"] in text
        assert refusal["suggestion"] in text
    assert json.loads(cli("runs", "--json").out) == []


def test_rejected_token_exits_7(cli, sim, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    monkeypatch.setenv("ITO_TOKEN", "not-the-token-42")
    r = cli("whoami")
    assert r.code == 7
    assert "not-the-token-42" not in r.out + r.err


def test_no_token_exits_7_with_a_hint(cli, sim, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ITO_BACKEND_URL", sim.url)
    r = cli("runs")
    assert r.code == 7 and "ito-tui login" in r.err


def test_unreachable_backend_exits_8(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ITO_TOKEN", "whatever")
    r = cli("--backend", f"http://127.0.0.1:{port}", "runs")
    assert r.code == 8
    assert "unreachable" in r.err


def test_plain_http_to_a_remote_host_is_a_usage_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ITO_TOKEN", "whatever")
    r = cli("runs", "--backend", "http://ito.example.com")
    assert r.code == 2
    assert "whatever" not in r.err
