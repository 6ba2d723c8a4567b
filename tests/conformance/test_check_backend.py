"""`ito-tui check-backend` against desk_sim, desk_sim in scaffold mode, and a broken server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.cli import main
from ito_tui.client import ItoClient
from ito_tui.client.conformance_checks import check_backend
from ito_tui.contract import TrainingSpec

from .brokenserver import broken_app

SPEC = TrainingSpec(
    booking_id="bk_h100_4n_ib",
    model_size="8B",
    data_ref="catalog://fineweb-edu@1.3",
    target_capability="general",
    budget_usd="30000",  # type: ignore[arg-type]
)


async def _finished_run(url: str, token: str) -> str:
    async with ItoClient(url, token=SecretStr(token)) as client:
        run = await client.create_run(SPEC)
        async for _event in client.events(run.run_id):
            pass
        return run.run_id


def _statuses(report: Any) -> dict[str, str]:
    return {c.name: c.status.value for c in report.checks}


async def test_desk_sim_passes_every_check_with_writes(sim: Any) -> None:
    await _finished_run(sim.url, sim.token)
    report = await check_backend(sim.url, SecretStr(sim.token), allow_writes=True)
    statuses = _statuses(report)
    assert report.failures == [], report.failures
    # The checks that need a finished run and writes ran rather than being skipped.
    for name in (
        "sse.framing",
        "sse.resume",
        "sse.terminal_204",
        "idempotency.replay",
        "idempotency.key_reused",
        "idempotency.key_missing",
        "errors.problem_json",
        "headers.x_request_id",
    ):
        assert statuses[name] == "pass", (name, statuses)
    assert report.not_implemented == []


async def test_read_only_check_creates_no_run(sim: Any) -> None:
    report = await check_backend(sim.url, SecretStr(sim.token))
    assert report.failures == []
    async with ItoClient(sim.url, token=SecretStr(sim.token)) as client:
        assert await client.runs() == []
    assert "runs.create" not in _statuses(report)


def test_cli_exit_0_and_json_against_desk_sim(
    sim: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    assert main(["check-backend", sim.url, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["fail"] == 0
    assert data["server"]["mode"] == "simulated"
    assert sim.token not in json.dumps(data)


def test_scaffold_mode_names_runs_create_and_exits_6(
    sim_factory: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sim = sim_factory(mode="scaffold")
    monkeypatch.setenv("ITO_TOKEN", sim.token)
    assert main(["check-backend", sim.url]) == 6
    out = capsys.readouterr().out
    assert "not implemented: runs.create" in out
    assert "capability.runs.create.501" in out


def test_broken_server_fails_loudly_naming_each_violation(
    serve_asgi: Callable[[Any], str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = serve_asgi(broken_app())
    monkeypatch.setenv("ITO_TOKEN", "any-token")
    assert main(["check-backend", url, "--json"]) == 10
    data = json.loads(capsys.readouterr().out)
    failed = {c["name"]: c["detail"] for c in data["checks"] if c["status"] == "fail"}
    assert "expected HTTP 401, got 200" in failed["auth.missing_token"]
    assert "application/problem+json" in failed["errors.problem_json"]
    assert "expected HTTP 501, got 500" in failed["capability.runs.create.501"]
    assert "no X-Request-Id" in failed["headers.x_request_id"]


def test_plain_http_to_a_remote_host_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ITO_TOKEN", "any-token")
    # A `.invalid` name can never resolve; the refusal comes from the policy check.
    assert main(["check-backend", "http://backend.invalid:8741"]) == 2
    assert "Refusing plain http://" in capsys.readouterr().err
