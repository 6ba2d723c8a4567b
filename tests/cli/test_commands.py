"""Each headless command's success path, in-process against desk_sim on 127.0.0.1."""

from __future__ import annotations

import json
import time

import pytest

from ito_tui.describe import mfu_text

from .conftest import Result

SPEC = (
    "--booking", "bk_h100_4n_ib", "--model-size", "8B", "--data", "catalog://fineweb-edu@1.3",
    "--target", "general", "--budget-usd", "30000", "--post-training", "dpo",
)  # fmt: skip


def submit(cli, *extra: str) -> str:
    """`train … --yes` and the run id it printed last on stdout."""
    r: Result = cli("train", *SPEC, "--yes", *extra)
    assert r.code == 0, r.err
    run_id = r.out.strip().splitlines()[-1]
    assert run_id.startswith("run_")
    return run_id


def wait_for_proposal(cli, run_id: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = json.loads(cli("status", run_id, "--json").out)
        if run["pending_proposal_ids"]:
            return str(run["pending_proposal_ids"][0])
        assert run["state"] not in {"completed", "failed", "cancelled"}, run["state"]
        time.sleep(0.1)
    raise AssertionError("no proposal appeared")


def test_whoami(cli, backend) -> None:
    r = cli("whoami")
    assert r.code == 0 and r.out.split()[0] == backend.operator
    doc = json.loads(cli("whoami", "--json").out)
    assert doc["operator"] == backend.operator and doc["mode"] == "simulated"


def test_bookings_lists_completed_by_default(cli, backend) -> None:
    r = cli("bookings")
    assert r.code == 0
    assert "bk_h100_4n_ib" in r.out and "4 × 8" in r.out and "infiniband 400 Gb/s" in r.out
    assert "bk_h200_1n_pending" not in r.out
    assert "bk_h200_1n_pending" in cli("bookings", "--all").out
    items = json.loads(cli("bookings", "--json").out)
    assert items and {b["status"] for b in items} == {"completed"}


def test_estimate_shows_plan_memory_time_and_cost(cli, backend) -> None:
    r = cli("estimate", *SPEC)
    assert r.code == 0, r.err
    for text in ("parallelism", "memory/GPU", "GiB HBM", "tokens/s/GPU", "MFU", "p50", "p90"):
        assert text in r.out, text
    assert "vs budget $30,000.00" in r.out
    est = json.loads(cli("estimate", *SPEC, "--json").out)
    assert est["plan"]["world_size"] == 32 and est["refusals"] == []
    # The MFU in the words the TUI's estimate pane uses (`describe.mfu_text`).
    plan = est["plan"]
    mfu = next(line for line in r.out.splitlines() if line.strip().startswith("MFU"))
    assert mfu.split(None, 1)[1].strip() == mfu_text(plan["est_mfu_frac"], plan["precision"])


def test_train_watch_follows_the_run_to_completion(cli, backend) -> None:
    r = cli("train", *SPEC, "--yes", "--watch")
    assert r.code == 0, r.err
    assert "run.completed" in r.out
    run_id = next(line for line in r.out.splitlines() if line.startswith("run_"))
    runs = json.loads(cli("runs", "--json").out)
    assert [x["run_id"] for x in runs] == [run_id]
    assert runs[0]["state"] == "completed"
    table = cli("runs", "--state", "completed")
    assert run_id in table.out and "completed" in table.out
    status = cli("status", run_id)
    assert status.code == 0 and "pretrain" in status.out and "passed" in status.out


def test_watch_json_prints_every_event_once_and_exits_0(cli, backend) -> None:
    run_id = submit(cli)
    r = cli("watch", run_id, "--json")
    assert r.code == 0, r.err
    events = [json.loads(line) for line in r.out.splitlines()]
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert events[-1]["type"] == "run.completed"
    assert "s3cret" not in r.out


def test_train_needs_yes_without_a_terminal(cli, backend) -> None:
    r = cli("train", *SPEC)
    assert r.code == 2 and "--yes" in r.err
    assert json.loads(cli("runs", "--json").out) == []


@pytest.mark.parametrize(
    ("booking", "code"), [("bk_h200_1n_pending", 2), ("bk_does_not_exist", 11)]
)
def test_train_and_estimate_need_a_completed_booking(cli, backend, booking: str, code: int) -> None:
    spec = list(SPEC)
    spec[1] = booking
    for cmd in ("train", "estimate"):
        r = cli(cmd, *spec, "--yes") if cmd == "train" else cli(cmd, *spec)
        assert r.code == code
        assert "completed booking from ito-compute is needed first" in r.err
    assert json.loads(cli("runs", "--json").out) == []


def test_missing_booking_flag_names_the_completed_bookings(cli, backend) -> None:
    r = cli("estimate", *SPEC[2:])
    assert r.code == 2 and "--booking is required" in r.err and "bk_h100_4n_ib" in r.err


def test_proposal_review_and_decisions(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    prop = wait_for_proposal(cli, run_id)
    listed = cli("proposals", run_id)
    assert listed.code == 0 and prop in listed.out and "why" in listed.out
    # In the words the TUI's modal uses too (ito_tui.describe).
    assert "roll back to step" in listed.out and "lost steps" in listed.out
    assert json.loads(cli("proposals", run_id, "--json").out)[0]["status"] == "pending"
    # Without a terminal and without --yes nothing is decided.
    r = cli("approve", prop)
    assert r.code == 2 and "cost" in r.out
    assert json.loads(cli("proposals", run_id, "--json").out)[0]["status"] == "pending"
    hostile = "looked \x1b]0;pwned\x07\x1b[2J fine"
    r = cli("reject", prop, "--yes", "--comment", hostile)
    assert r.code == 0, r.err
    assert "rejected" in r.out
    shown = cli("proposals", run_id)
    assert "\x1b" not in shown.out and "\x07" not in shown.out
    assert "looked ␛]0;pwned␇␛[2J fine" in shown.out
    # A second decision is refused by the backend and the first one is shown.
    again = cli("approve", prop, "--yes")
    assert again.code == 9 and "rejected" in (again.out + again.err)


def test_cancel_restates_spend_and_watch_exits_5(cli, backend) -> None:
    run_id = submit(cli, "--scenario", "loss-spike")
    wait_for_proposal(cli, run_id)  # the run is paused: it cannot finish under us
    busy = cli("train", *SPEC, "--yes")  # the booking already carries this run
    assert busy.code == 9 and "refused" in busy.err
    assert "bk_h100_4n_ib" in cli("bookings").out and run_id in cli("bookings").out
    r = cli("cancel", run_id)
    assert r.code == 2 and "spent of" in r.out
    r = cli("cancel", run_id, "--yes", "--reason", "wrong data")
    assert r.code == 0, r.err
    assert "spent of" in r.out
    watched = cli("watch", run_id, "--since", "0")
    assert watched.code == 5
    assert "needs a person" in watched.out and "ito-tui approve prop_" in watched.out
    assert "cancelled" in watched.out.splitlines()[-1]
    assert cli("cancel", run_id, "--yes").code == 9


def test_colour_follows_force_color_no_color_and_the_terminal(
    cli, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "\x1b" not in cli("bookings").out  # captured stdout is not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1m" in cli("bookings").out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in cli("bookings").out
