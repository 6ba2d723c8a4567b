"""`check-backend`'s job-log and fleet checks: desk_sim passes them, its scaffold answers
501 naming each capability, and a backend breaking v1.1 is named check by check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from ito_tui.client.conformance_checks import check_backend

from .brokenlogs import broken_logs_app
from .test_check_backend import _finished_run

CHECKS = (
    "logs.framing",
    "logs.resume",
    "logs.filters",
    "logs.page",
    "logs.end_204",
    "logs.invalid_query",
    "fleet.schema",
    "fleet.not_found",
    "telemetry.metric",
    "telemetry.range",
)


async def test_desk_sim_passes_the_log_and_fleet_checks(sim: Any) -> None:
    await _finished_run(sim.url, sim.token)
    report = await check_backend(sim.url, SecretStr(sim.token))
    statuses = {c.name: c.status.value for c in report.checks}
    assert {name: statuses.get(name) for name in CHECKS} == dict.fromkeys(CHECKS, "pass")
    assert report.failures == []


async def test_a_scaffold_answers_501_naming_runs_logs_and_runs_fleet(
    sim_factory: Callable[..., Any],
) -> None:
    sim = sim_factory(mode="scaffold")
    report = await check_backend(sim.url, SecretStr(sim.token))
    statuses = {c.name: c.status.value for c in report.checks}
    assert statuses["capability.runs.logs.501"] == "pass"
    assert statuses["capability.runs.fleet.501"] == "pass"
    assert {"runs.logs", "runs.fleet"} <= set(report.not_implemented)
    assert not any(name in statuses for name in CHECKS)


async def test_a_backend_breaking_the_log_contract_is_named_check_by_check(
    serve_asgi: Callable[[Any], str],
) -> None:
    url = serve_asgi(broken_logs_app(id_off_by_one=False))
    report = await check_backend(url, SecretStr("any-token"))
    failed = {c.name: c.detail for c in report.failures}
    assert "after Last-Event-ID 20 expected [21, 22, 23], got [1, 2, 3]" in failed["logs.resume"]
    assert "level info, asked for warning and above" in failed["logs.filters"]
    assert "oldest first" in failed["logs.page"]
    assert "answered 200, not 204" in failed["logs.end_204"]
    assert "not 400 or 422" in failed["logs.invalid_query"]
    assert "b200-16n-ib-00 is listed twice" in failed["fleet.schema"]
    assert "metric=grad_norm brought samples carrying 'lr' too" in failed["telemetry.metric"]
    assert "from_step=20&to_step=30 brought seq 1 at step 10" in failed["telemetry.range"]


async def test_an_id_that_is_not_the_lines_seq_fails_the_framing(
    serve_asgi: Callable[[Any], str],
) -> None:
    url = serve_asgi(broken_logs_app(id_off_by_one=True))
    report = await check_backend(url, SecretStr("any-token"))
    failed = {c.name: c.detail for c in report.failures}
    assert "SSE id '12' differs from the line's seq 11" in failed["logs.framing"]
    assert "logs.resume" not in {c.name for c in report.checks}
