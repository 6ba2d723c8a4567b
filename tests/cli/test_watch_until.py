"""`watch` for scripts: a failed gate's benchmarks one line each, and `--until proposal|gate|end`
(exit 12 when it happens) — against desk_sim on 127.0.0.1; the cases that need the run to
move on while `watch` follows it run the real `ito-tui` in a subprocess."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import pytest

from ito_tui.format import general
from tests.support.children import rest_of_output

from .conftest import ITO_TUI, subprocess_env
from .test_commands import SPEC, submit, wait_for_proposal
from .test_scripting import strict


def _failing(cli, run_id: str) -> list[dict[str, Any]]:
    run = json.loads(cli("status", run_id, "--json").out)
    gates = [s["gate"] for s in run["stages"] if s.get("gate") and s["gate"]["status"] == "failed"]
    assert len(gates) == 1
    return [r for r in gates[0]["results"] if not r["passed"]]


def test_a_failed_gate_prints_each_failing_benchmark_and_by_how_much(cli, backend) -> None:
    r = cli("train", *SPEC, "--yes", "--watch", "--scenario", "gate-fail")
    assert r.code == 3, r.err
    run_id = r.out.splitlines()[0]
    failing = _failing(cli, run_id)
    assert failing
    for out in (r.out, cli("watch", run_id).out):  # live, and a watch after the fact
        lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("gate failed:")]
        assert len(lines) == len(failing), lines
        for res, line in zip(failing, lines, strict=True):
            short = "short by" if res["comparator"] in (">=", ">") else "over by"
            assert line == (
                f"gate failed: {res['benchmark']} {res['metric']} {general(res['value'], 4)}, "
                f"needs {res['comparator']} {general(res['threshold'], 4)}: {short} "
                f"{general(abs(res['value'] - res['threshold']), 3)} ({res['rule']}"
                + ("" if res["reference_value"] is None else ", reference ")
                + ("" if res["reference_value"] is None else general(res["reference_value"], 4))
                + ")"
            )


def test_until_proposal_exits_12_while_one_waits(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    prop = wait_for_proposal(cli, run_id)
    r = cli("watch", run_id, "--until", "proposal")
    assert r.code == 12, r.err
    assert prop in r.err and "waits for a decision" in r.err
    j = cli("watch", run_id, "--json", "--until", "proposal")
    assert j.code == 12, j.err
    events = [strict(line) for line in j.out.splitlines()]
    assert "proposal.created" in [e["type"] for e in events]
    assert cli("approve", prop, "--yes").code == 0
    # Nothing waits any more: it follows the run to its end, with the outcome.
    done = cli("watch", run_id, "--until", "proposal")
    assert done.code == 0, done.err
    assert cli("watch", run_id, "--until", "end").code == 0
    assert cli("watch", run_id, "--until", "sideways").code == 2


def _watch(url: str, run_id: str, *flags: str) -> subprocess.Popen[str]:
    """`ito-tui watch RUN …` as a child; returns once it has read the run's snapshot."""
    proc = subprocess.Popen(
        [str(ITO_TUI), "--backend", url, "watch", run_id, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(ITO_TOKEN="s3cret"),
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the snapshot is printed before the stream opens
    assert first.startswith(run_id), first
    return proc


def _approve(url: str, proposal_id: str) -> None:
    reply = httpx.post(
        f"{url}/v1/proposals/{proposal_id}/approve",
        json={},
        headers={"Authorization": "Bearer s3cret", "Idempotency-Key": f"k-{proposal_id}"},
    )
    assert reply.status_code == 200, reply.text


@pytest.mark.slow
@pytest.mark.parametrize(("fail", "code", "said"), [(False, 12, "passed"), (True, 3, "failed")])
def test_until_gate_exits_at_the_next_gate(cli, backend, fail: bool, code: int, said: str) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    prop = wait_for_proposal(cli, run_id)  # paused in pretrain, before its gate
    if fail:
        injected = httpx.post(
            f"{backend.url}/v1/sim/runs/{run_id}/inject",
            json={"kind": "gate_fail", "params": {"stage": "pretrain"}},
            headers=backend.headers(),
        )
        assert injected.status_code == 202, injected.text
    proc = _watch(backend.url, run_id, "--until", "gate")
    try:
        _approve(backend.url, prop)
        out, err = rest_of_output(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == code, err[-2000:]
    assert "--until gate: gate " in err and f"(pretrain) {said}" in err
    types = [line.split()[2] for line in out.splitlines() if line[:2].isdigit()]
    assert types[-1] == f"gate.{said}"  # stopped there, not at the run's end
    assert "run.completed" not in types and "run.failed" not in types
    if fail:
        assert "gate failed:" in out
