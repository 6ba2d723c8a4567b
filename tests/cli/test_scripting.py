"""Issue 20, every action scriptable: `--json` on what changes something, the run id alone
on stdout, `proposals --pending` across runs, `runs --state active`, `checkpoints`,
`cancel --if-running` — in-process against desk_sim on 127.0.0.1."""

from __future__ import annotations

import io
import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from ito_tui.cli import main
from ito_tui.commands import proposals

from .conftest import ITO_TUI, Result, subprocess_env
from .test_commands import SPEC, submit, wait_for_proposal

SMALL = (
    "--booking", "bk_h100_1n", "--model-size", "150M", "--data", "catalog://fineweb-edu@1.3",
    "--target", "general", "--budget-usd", "5000",
)  # fmt: skip
"""A second spec, on the other completed booking: two runs at once."""


def strict(text: str) -> Any:
    """`json.loads` as `jq` reads: a bare NaN / Infinity token is an error, not a float."""

    def refuse(token: str) -> Any:
        raise ValueError(f"not RFC 8259 JSON: {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("scenario", "code", "last"), [("happy", 0, "run.completed"), ("gate-fail", 3, "run.failed")]
)
def test_train_watch_json_is_the_event_stream_ending_with_the_terminal_event(
    cli, backend, scenario: str, code: int, last: str
) -> None:
    r = cli("train", *SPEC, "--yes", "--watch", "--json", "--scenario", scenario)
    assert r.code == code, r.err
    events = [strict(line) for line in r.out.splitlines()]  # every line, jq-style
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == last
    assert len({e["run_id"] for e in events}) == 1
    # Exactly what `watch --json` prints for the same run.
    again = cli("watch", events[0]["run_id"], "--json")
    assert again.code == code and again.out == r.out
    assert "p50" in r.err  # the estimate went to stderr
    if scenario == "gate-fail":
        failed = [e for e in events if e["type"] == "gate.failed"]
        assert len(failed) == 1
        results = failed[0]["data"]["gate"]["results"]
        assert any(not x["passed"] for x in results)
        reported = [e["data"]["result"] for e in events if e["type"] == "gate.result"]
        assert [x for x in reported if not x["passed"]] == [x for x in results if not x["passed"]]


def test_train_prints_only_the_run_id_on_stdout_and_the_estimate_on_stderr(cli, backend) -> None:
    r = cli("train", *SPEC, "--yes")
    assert r.code == 0, r.err
    assert r.out.splitlines() == [r.out.strip()] and r.out.startswith("run_")
    for text in ("parallelism", "p50", "p90", "submitted; follow it with"):
        assert text in r.err, text
    assert cli("watch", r.out.strip()).code == 0  # done: the booking is free again
    q = cli("train", *SPEC, "--yes", "-q")
    assert q.code == 0 and q.out.startswith("run_") and len(q.out.split()) == 1
    assert "p50" not in q.err and "submitted" not in q.err
    assert q.err.strip() == "DEMO: simulated backend"  # what every screen says, kept
    assert cli("watch", q.out.strip()).code == 0
    j = cli("train", *SPEC, "--yes", "--json")
    assert j.code == 0, j.err
    run = strict(j.out)
    assert run["run_id"].startswith("run_") and run["spec"]["model_size"] == "8B"
    assert run["run_id"] in {x["run_id"] for x in strict(cli("runs", "--json").out)}


def test_quiet_still_says_why_a_spec_is_refused(cli, backend) -> None:
    r = cli("train", *SPEC, "--yes", "-q", "--scenario", "refused")
    assert r.code == 9 and r.out == ""
    assert "not submitted" in r.err and "refused" in r.err and "p50" not in r.err


def test_cancel_json_and_if_running(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    wait_for_proposal(cli, run_id)  # paused: it cannot end under us
    r = cli("cancel", run_id, "--yes", "--json")
    assert r.code == 0, r.err
    doc = strict(r.out)
    assert doc["run_id"] == run_id and doc["state"] in {"cancelling", "cancelled"}
    assert "spent of" in r.err  # restated for a person, off stdout
    assert cli("watch", run_id).code == 5
    refused = cli("cancel", run_id, "--yes")
    assert refused.code == 9 and "already ended (cancelled)" in refused.err
    done = cli("cancel", run_id, "--yes", "--if-running")
    assert done.code == 0 and done.out == "" and "already ended (cancelled)" in done.err
    as_json = cli("cancel", run_id, "--if-running", "--json")  # no --yes needed: nothing to do
    assert as_json.code == 0 and strict(as_json.out)["state"] == "cancelled"
    assert cli("cancel", "run_nope", "--yes", "--if-running").code == 11


def test_approve_json_is_the_proposal_as_decided(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    prop = wait_for_proposal(cli, run_id)
    r = cli("approve", prop, "--yes", "--json", "--comment", "checked the curve")
    assert r.code == 0, r.err
    doc = strict(r.out)
    assert doc["proposal_id"] == prop and doc["status"] in {"approved", "executed"}
    assert doc["decided_by"] == "alice" and doc["comment"] == "checked the curve"
    assert "why" in r.err  # shown to the person deciding, not on stdout
    # Decided already: the decision as it stands, exit 9 as before.
    again = cli("reject", prop, "--yes", "--json")
    assert again.code == 9 and strict(again.out)["decided_by"] == "alice"


class _AliceDecidesFirst(io.StringIO):
    """bob's terminal: while he reads the prompt, alice approves the same proposal."""

    def __init__(self, url: str, proposal_id: str) -> None:
        super().__init__()
        self.url, self.proposal_id = url, proposal_id

    def isatty(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:
        reply = httpx.post(
            f"{self.url}/v1/proposals/{self.proposal_id}/approve",
            json={"comment": "alice was faster"},
            headers={"Authorization": "Bearer s3cret", "Idempotency-Key": str(uuid.uuid4())},
        )
        assert reply.status_code == 200, reply.text
        return "reject\n"


def test_reject_json_on_a_409_prints_the_winners_decision(
    cli, backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    prop = wait_for_proposal(cli, run_id)
    monkeypatch.setenv("ITO_TOKEN", "hunter2")  # bob
    monkeypatch.setattr(proposals, "interactive", lambda: True)
    monkeypatch.setattr(sys, "stdin", _AliceDecidesFirst(backend.url, prop))
    capsys.readouterr()
    code = main(["reject", prop, "--json"])
    r = Result(code, *capsys.readouterr())
    assert r.code == 9, r.err
    doc = strict(r.out)  # the winner's decision, from the 409's body
    assert doc["proposal_id"] == prop and doc["decided_by"] == "alice"
    assert doc["comment"] == "alice was faster" and doc["status"] in {"approved", "executed"}
    assert "your decision was not recorded" in r.err


def test_proposals_pending_across_runs_and_runs_state_active(cli, backend) -> None:
    done = submit(cli)  # happy: completes
    assert cli("watch", done).code == 0
    a = submit(cli, "--scenario", "loss-spike")
    b_r = cli("train", *SMALL, "--yes", "--scenario", "loss-spike")
    assert b_r.code == 0, b_r.err
    b = b_r.out.strip()
    props = {wait_for_proposal(cli, a), wait_for_proposal(cli, b)}
    pending = cli("proposals", "--pending", "--json")
    assert pending.code == 0, pending.err
    items = strict(pending.out)
    assert {p["proposal_id"] for p in items} == props
    assert {p["run_id"] for p in items} == {a, b} and {p["status"] for p in items} == {"pending"}
    human = cli("proposals", "--pending")
    assert all(p in human.out for p in props) and "why" in human.out
    assert cli("proposals", "--pending", "--status", "approved").code == 2
    active = cli("runs", "--state", "active", "--json")
    assert active.code == 0, active.err
    assert {r["run_id"] for r in strict(active.out)} == {a, b}
    table = cli("runs", "--state", "active")
    assert a in table.out and b in table.out and done not in table.out
    every = {r["run_id"] for r in strict(cli("runs", "--json").out)}
    assert every == {a, b, done}


def test_checkpoints_lists_ids_as_the_backend_records_them(cli, backend) -> None:
    run_id = submit(cli)
    assert cli("watch", run_id).code == 0
    r = cli("checkpoints", run_id, "--json")
    assert r.code == 0, r.err
    items = strict(r.out)
    recorded = httpx.get(
        f"{backend.url}/v1/runs/{run_id}/checkpoints", headers=backend.headers()
    ).json()
    assert items == recorded and items
    table = cli("checkpoints", run_id)
    lines = table.out.splitlines()
    assert lines[0].split()[:3] == ["CHECKPOINT", "SAVED", "UTC"]
    for ckpt, line in zip(items, lines[1:], strict=True):
        assert line.startswith(ckpt["checkpoint_id"])
        assert ckpt["created_at"][:10] in line  # the date, then the UTC time
    assert cli("checkpoints", "run_nope").code == 11


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")
@pytest.mark.parametrize(("scenario", "code"), [("happy", 0), ("gate-fail", 3)])
def test_train_watch_json_pipes_into_jq(backend, scenario: str, code: int) -> None:
    """`ito-tui train … --yes --watch --json | jq` end to end, in a real shell pipeline."""
    train = [str(ITO_TUI), "train", *SPEC, "--yes", "--watch", "--json", "--scenario", scenario]
    line = shlex.join(train) + " | jq -c '[.seq, .type]'"
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
    assert r.returncode == code, r.stderr[-2000:]  # ito-tui's code: jq parsed every line
    pairs = [json.loads(x) for x in r.stdout.splitlines()]
    assert [seq for seq, _ in pairs] == list(range(1, len(pairs) + 1))
    assert pairs[-1][1] == ("run.completed" if code == 0 else "run.failed")


class _CancelledMeanwhile(io.StringIO):
    """A terminal at which, while the prompt waits, someone else cancels the run."""

    def __init__(self, url: str, run_id: str) -> None:
        super().__init__()
        self.url, self.run_id = url, run_id

    def isatty(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:
        headers = {"Authorization": "Bearer hunter2", "Idempotency-Key": str(uuid.uuid4())}
        reply = httpx.post(f"{self.url}/v1/runs/{self.run_id}/cancel", json={}, headers=headers)
        assert reply.status_code == 202, reply.text
        wait_for(httpx.Client(base_url=self.url, headers=headers), self.run_id, _ended)
        return "cancel\n"


def wait_for(
    client: httpx.Client, run_id: str, predicate: Callable[[dict[str, Any]], bool]
) -> None:
    """Poll the run over raw HTTP until `predicate` holds (bounded)."""
    deadline = time.monotonic() + 30
    while not predicate(client.get(f"/v1/runs/{run_id}").json()):
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.05)


def _ended(run: dict[str, Any]) -> bool:
    return run["state"] in {"completed", "failed", "cancelled"}


@pytest.mark.parametrize(("flags", "code"), [((), 9), (("--if-running",), 0)])
def test_a_run_that_ends_before_the_cancel_lands(
    backend, monkeypatch: pytest.MonkeyPatch, capsys, flags: tuple[str, ...], code: int
) -> None:
    from ito_tui.commands import runs

    r = Result(main(["train", *SPEC, "--yes", "--scenario", "loss-spike"]), *capsys.readouterr())
    run_id = r.out.strip()
    wait_for(httpx.Client(base_url=backend.url, headers=backend.headers()), run_id,
             lambda run: bool(run["pending_proposal_ids"]))  # fmt: skip
    monkeypatch.setattr(runs, "interactive", lambda: True)
    monkeypatch.setattr(sys, "stdin", _CancelledMeanwhile(backend.url, run_id))
    done = Result(main(["cancel", run_id, "--json", *flags]), *capsys.readouterr())
    assert done.code == code, done.err
    if code == 0:  # 409 run.terminal: the same as a run that had ended before
        assert strict(done.out)["state"] == "cancelled" and "already ended" in done.err
    else:
        assert done.out == "" and "already ended (cancelled)" in done.err
