"""`train --from RUN` (the run's spec, the flags over it) and `status`'s summary of a run
that ended, in-process against desk_sim on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

from .conftest import Result
from .test_commands import SPEC, submit, wait_for_proposal

SPEC_FIELDS = (
    "booking_id", "model_size", "data_ref", "data_kind", "target_capability", "post_training",
    "target_tokens", "seq_len",
)  # fmt: skip


def finished(cli, *extra: str) -> str:
    """A run of SPEC (and `extra`) followed to its end; its id."""
    r: Result = cli("train", *SPEC, *extra, "--yes", "--watch", "--quiet")
    run_id = r.out.strip().splitlines()[0]
    assert run_id.startswith("run_"), (r.out, r.err)
    return run_id


def test_train_from_submits_the_old_spec_with_the_new_budget(cli, backend) -> None:
    old_id = finished(cli, "--tokens", "160000000000", "--seq-len", "4096", "--data-kind", "custom")
    old = json.loads(cli("status", old_id, "--json").out)
    r = cli("train", "--from", old_id, "--budget-usd", "41000", "--yes", "--json")
    assert r.code == 0, r.err
    assert f"spec from {old_id}" in r.err
    new = json.loads(r.out)
    assert new["run_id"] != old_id
    # Every field of the old spec is sent again; only the budget is the flag's.
    for field in SPEC_FIELDS:
        assert new["spec"][field] == old["spec"][field], field
    assert old["spec"]["target_tokens"] == 160_000_000_000 and new["spec"]["seq_len"] == 4096
    assert old["spec"]["data_kind"] == "custom"
    assert new["spec"]["budget_usd"] == "41000.00" != old["spec"]["budget_usd"]
    # The estimate was shown first, as `train` does.
    assert "p50" in r.err and "p90" in r.err


def test_train_from_a_flag_overrides_and_none_drops_post_training(cli, backend) -> None:
    old_id = finished(cli)
    r = cli("estimate", "--from", old_id, "--model-size", "1.5B", "--post-training", "none",
            "--json")  # fmt: skip
    assert r.code == 0, r.err
    stages = [s["stage"] for s in json.loads(r.out)["stages"]]
    assert "dpo" not in stages and "sft" not in stages


def test_train_from_an_unknown_run_is_not_found_and_submits_nothing(cli, backend) -> None:
    r = cli("train", "--from", "run_nope", "--budget-usd", "1000", "--yes")
    assert r.code == 11
    assert "--from: run run_nope not found" in r.err and r.out == ""
    assert json.loads(cli("runs", "--json").out) == []


def test_train_from_a_run_whose_booking_is_busy_says_to_pick_another(cli, backend) -> None:
    # Paused on a proposal that never expires here, the run holds its booking until the
    # test is done (at the fixture's speed a happy run could end before the second command,
    # as it once did on a loaded CI).
    running = submit(cli, "--scenario", "loss-spike")
    wait_for_proposal(cli, running)
    r = cli("train", "--from", running, "--yes")
    assert r.code == 2, r.err
    assert "is busy with" in r.err and "--booking" in r.err
    assert [x["run_id"] for x in json.loads(cli("runs", "--json").out)] == [running]


def test_status_prints_the_summary_of_a_completed_run(cli, backend) -> None:
    run_id = finished(cli)
    r = cli("status", run_id)
    assert r.code == 0, r.err
    summary = r.out.split("summary", 1)[1]
    for label in ("outcome", "wall time", "GPU-hours", "cost", "interruptions", "rollbacks"):
        assert label in summary, label
    assert "completed" in summary and "est. p50" in summary and "pretrain" in summary
    doc = json.loads(cli("status", run_id, "--json").out)
    s = doc["summary"]
    assert s["outcome"] == "completed" and s["rollbacks"] == []
    assert s["usd_spent"] == doc["spend"]["usd_spent"] and s["usd_p50"] is not None
    pretrain = next(x for x in s["stages"] if x["stage"] == "pretrain")
    assert isinstance(pretrain["final_loss"], float) and pretrain["gate"]["status"] == "passed"


def test_status_of_a_failed_gate_says_which_benchmark_and_by_how_much(cli, backend) -> None:
    run_id = finished(cli, "--scenario", "gate-fail")
    r = cli("status", run_id)
    summary = r.out.split("summary", 1)[1]
    assert "stopped by a failed gate: the mid-train gate" in summary
    assert "gate FAILED" in summary and "short by" in summary
    s = json.loads(cli("status", run_id, "--json").out)["summary"]
    assert s["outcome"] == "gate_failed" and s["failed_gate_id"]
    mid = next(x for x in s["stages"] if x["stage"] == "mid_train")
    # The stage its gate stopped never completed: its loss is the newest sample's.
    assert isinstance(mid["final_loss"], float)


def test_status_of_a_running_run_has_no_summary(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    wait_for_proposal(cli, run_id)  # paused on a person: it cannot end under the test
    doc = json.loads(cli("status", run_id, "--json").out)
    assert doc["state"] not in ("completed", "failed", "cancelled"), doc["state"]
    assert doc["summary"] is None
    assert "summary" not in cli("status", run_id).out.split("\n", 1)[1]


async def test_a_failed_extra_read_costs_the_summary_those_facts_only() -> None:
    import io

    from ito_tui.client.errors import ProtocolError
    from ito_tui.commands.output import Output
    from ito_tui.commands.summary import fetch_run_end
    from ito_tui.format import MISSING
    from ito_tui.state.summary_text import summary_rows
    from tests.support.fakes import FakeClient
    from tests.tui.pipeline_fakes import run_snapshot

    class BrokenProposals(FakeClient):
        async def proposals(self, run_id: str, status: str | None = None) -> Any:
            raise ProtocolError("GET /v1/runs/{id}/proposals: items[0].kind: not a string")

    run = run_snapshot(state="completed")
    client = BrokenProposals(run_model=run)
    err = io.StringIO()
    end = await fetch_run_end(client, run, Output(io.StringIO(), err))
    assert end is not None and end.outcome == "completed"
    assert dict(summary_rows(end))["rollbacks"] == MISSING
    assert "summary:" in err.getvalue() and "proposals" in err.getvalue()
