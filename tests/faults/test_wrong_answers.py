"""Wrong answers: a backend (or a cache in front of it) answering about another object.

Each case rewrites one of desk_sim's answers so it is about another run or proposal,
or says a decision left the proposal undecided. The CLI must exit 1 (a protocol
error) naming the endpoint and what it got, and must never print the success line
nor attribute the answer to the object asked about.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ItoClient, ProtocolError, RetryPolicy
from ito_tui.contract import TrainingSpec
from tests.client import samples
from tests.client.fakeserver import Conn, FakeServer, Received
from tests.tui.pipeline_live import start_run

from .conftest import Tampered
from .hostile import run_cli
from .test_injection import pending_proposal

pytestmark = pytest.mark.faults


def every(fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Any], Any]:
    """Apply `fn` to the answer, or to each item of a list answer."""
    return lambda obj: [fn(o) for o in obj] if isinstance(obj, list) else fn(obj)


@dataclass(frozen=True)
class Case:
    path: str
    method: str
    rewrite: Callable[[dict[str, Any]], dict[str, Any]]
    argv: tuple[str, ...]
    """`{run}` and `{proposal}` are filled in."""
    endpoint: str
    says: str
    success: str
    """What the CLI prints on success (it must not)."""


CASES = {
    "status of another run": Case(
        r"^/v1/runs/[^/]+$",
        "GET",
        lambda r: {**r, "run_id": "run_other"},
        ("status", "{run}"),
        "GET /v1/runs/{id}: answer is about run run_other, asked for run {run}",
        "run_other",
        "run {run}",
    ),
    "cancel answered about another run": Case(
        r"/cancel$",
        "POST",
        lambda r: {**r, "run_id": "run_other"},
        ("cancel", "{run}", "--yes"),
        "POST /v1/runs/{id}/cancel: answer is about run run_other, asked for run {run}",
        "run_other",
        "is cancel",
    ),
    "approval answered about another proposal": Case(
        r"/approve$",
        "POST",
        lambda p: {**p, "proposal_id": "prop_other"},
        ("approve", "{proposal}", "--yes"),
        "POST /v1/proposals/{id}/approve: answer is about proposal prop_other",
        "prop_other",
        "approved",
    ),
    "approval that left the proposal pending": Case(
        r"/approve$",
        "POST",
        lambda p: {**p, "status": "pending", "decided_by": None},
        ("approve", "{proposal}", "--yes"),
        "POST /v1/proposals/{id}/approve: answer says proposal {proposal} is pending",
        "pending after approve",
        "proposal {proposal} pending",
    ),
    "rejection answered as approved": Case(
        r"/reject$",
        "POST",
        lambda p: {**p, "status": "approved"},
        ("reject", "{proposal}", "--yes"),
        "POST /v1/proposals/{id}/reject: answer says proposal {proposal} is approved",
        "expected rejected",
        "proposal {proposal} approved",
    ),
    "proposals of another run": Case(
        r"/proposals$",
        "GET",
        lambda p: {**p, "run_id": "run_other"},
        ("proposals", "{run}"),
        "GET /v1/runs/{id}/proposals: item 0 has run_id run_other, asked for run_id {run}",
        "run_other",
        "{proposal}",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_answer_about_something_else_is_a_protocol_error(
    name: str,
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = CASES[name]
    # Slow approvals: the proposal stays pending (the run paused) while the case runs.
    t: Tampered = tampered(scenario="loss-spike", approval_speed=100.0)
    run_id = asyncio.run(start_run(t.url, "loss-spike"))
    proposal = asyncio.run(pending_proposal(t.url, run_id)).proposal_id
    t.tamper.break_json(case.path, every(case.rewrite), methods=(case.method,))
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    monkeypatch.setenv("ITO_BACKEND_URL", t.url)

    def fill(text: str) -> str:
        return text.replace("{run}", run_id).replace("{proposal}", proposal)

    code, out, err = run_cli(capsys, monkeypatch, *map(fill, case.argv))
    assert code == 1, (code, out[-500:], err[-500:])
    assert fill(case.endpoint) in err, err[-800:]
    assert case.says in err, err[-800:]
    assert fill(case.success) not in out, out[-800:]


async def test_client_calls_check_what_they_asked_for() -> None:
    """The calls the CLI cases above do not reach: a 409 about another proposal (or one
    still pending), a run created on another booking, another booking."""
    server = FakeServer().start()

    def answer(status: int, body: Any) -> Any:
        async def handler(req: Received, conn: Conn) -> None:
            await conn.json(status, body)

        return handler

    def decided(proposal_id: str, status: str) -> Any:
        current = {**samples.proposal(proposal_id, status), "decided_by": "bob"}

        async def handler(req: Received, conn: Conn) -> None:
            await conn.problem(409, "proposal.already_decided", "Already decided", current=current)

        return handler

    server.routes.update(
        {
            ("POST", "/v1/proposals/prop_1/approve"): decided("prop_other", "rejected"),
            ("POST", "/v1/proposals/prop_2/reject"): decided("prop_2", "pending"),
            ("POST", "/v1/runs"): answer(202, samples.run()),  # on booking bk_1
            ("GET", "/v1/bookings/bk_2"): answer(200, samples.booking("bk_1")),
        }
    )
    spec = TrainingSpec(
        booking_id="bk_9",
        model_size="1.5B",
        data_ref="catalog://fineweb-edu@2024-10",
        target_capability="general",
        budget_usd=Decimal(1000),
    )
    try:
        async with ItoClient(
            server.url, token=SecretStr("tok-answers-1"), retry=RetryPolicy(max_attempts=1)
        ) as client:
            with pytest.raises(ProtocolError, match="about proposal prop_other, asked for"):
                await client.approve("prop_1")
            with pytest.raises(ProtocolError, match="proposal prop_2 is still pending"):
                await client.reject("prop_2")
            with pytest.raises(ProtocolError, match="about booking bk_1, asked for booking bk_9"):
                await client.create_run(spec)
            with pytest.raises(ProtocolError, match="about booking bk_1, asked for booking bk_2"):
                await client.booking("bk_2")
    finally:
        server.stop()
