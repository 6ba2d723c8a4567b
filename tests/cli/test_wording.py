"""The CLI says what the TUI says: a proposal in its kind's words, a failed gate as what it
needed, the backend's numbers formatted, the spec's fields named by their flags."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime

import pytest

from ito_tui.commands import proposals
from ito_tui.commands.output import Output
from ito_tui.commands.render import render_proposal
from ito_tui.describe import (
    KINDS,
    action_text,
    consequence,
    cost_text,
    evidence_text,
    proposal_words,
)
from ito_tui.spec_checks import check_model_size
from tests.support.proposals import NOW, proposal

from .test_commands import wait_for_proposal

BUDGET = (
    "--booking", "bk_h100_4n_ib", "--model-size", "8B", "--data", "catalog://fineweb-edu@1.3",
    "--target", "general",
)  # fmt: skip
UNFORMATTED = re.compile(r"\$\d{4,}|step \d{4,}")
"""Money or a step of four digits or more without thousands separators."""


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_proposal_is_printed_in_the_words_of_the_modal(kind: str) -> None:
    p = proposal(kind)
    out = io.StringIO()
    render_proposal(Output(out, io.StringIO(), environ={}), p, now=NOW)
    text = out.getvalue()
    words = proposal_words(kind)
    assert text.splitlines()[0] == f"prop_1  {words.title}  pending  run run_1"
    for label, phrase in (("why", evidence_text(p)), ("what", action_text(p)),
                          ("cost", cost_text(p))):  # fmt: skip
        assert re.search(rf"^  {label} +{re.escape(phrase)}$", text, re.M), (label, text)
    assert "Expires in 12m05s (19:12:05 UTC); then it is rejected automatically." in text
    assert ("lost steps" in text) == (kind != "extend_budget")  # none lost by a budget


def test_a_budget_extension_reads_as_one_from_show_to_the_confirmation(
    cli, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proposals, "interactive", lambda: True)
    r = cli("train", *BUDGET, "--budget-usd", "20000", "--yes", "--scenario", "budget")
    assert r.code == 0, r.err
    run_id = r.out.split()[-1]
    prop = wait_for_proposal(cli, run_id, timeout=60)
    shown = cli("proposals", run_id)
    assert shown.code == 0
    first = shown.out.splitlines()[0]
    assert first.startswith(prop) and "Extend the budget" in first
    assert "lost steps" not in shown.out and "restart" not in shown.out
    assert "The run continues." in shown.out
    # The backend's reason (desk_sim) and our numbers alike: `$21,980.04`, not `$21980.04`.
    assert not UNFORMATTED.search(shown.out), shown.out
    asked = cli("approve", prop, stdin="\n")
    assert asked.code == 0 and "nothing decided" in asked.err
    doc = json.loads(cli("proposals", run_id, "--json").out)[0]
    from ito_tui.contract import Proposal

    p = Proposal.model_validate(doc)
    assert f"{consequence(p)} Raise the run's budget? (type 'approve'" in asked.err
    assert "Approving raises the run's budget by $" in asked.err
    assert "restart" not in asked.err.replace("not restarted", "")


def test_validation_names_the_flag_in_the_words_of_the_form(cli, backend) -> None:
    r = cli("estimate", *BUDGET, "--budget-usd", "30000", "--model-size", "8 billion")
    assert r.code == 2
    message = check_model_size("8 billion")
    assert message == "Use a number and M or B, e.g. 8B, 1.5B, 150M."
    assert f"--model-size: {message}" in r.err
    assert "model_size" not in r.err and "String should match" not in r.err
    r = cli("estimate", *BUDGET, "--budget-usd", "30000", "--data", "ftp://x")
    assert r.code == 2 and "--data: Scheme must be s3://, hf://, catalog:// or file:///" in r.err


def test_a_refusal_names_the_flags_not_the_api_fields(cli, backend) -> None:
    r = cli("estimate", *BUDGET, "--budget-usd", "300")
    assert r.code == 9
    assert "[--budget-usd]" in r.out and "Raise --budget-usd to at least $" in r.out
    assert "budget_usd" not in r.out and "target_tokens" not in r.out
    assert not UNFORMATTED.search(r.out)


def test_the_stage_names_are_the_tuis(cli, backend) -> None:
    r = cli("train", *BUDGET, "--budget-usd", "30000", "--post-training", "dpo", "--yes")
    run_id = r.out.split()[-1]
    status = cli("status", run_id)
    assert re.search(r"^  data prep +\S", status.out, re.M), status.out
    assert re.search(r"^  mid-train +", status.out, re.M) and "mid_train" not in status.out
    assert re.search(r"^  RLVR +skipped", status.out, re.M)  # post-training stops at DPO


def test_a_decided_proposal_carries_the_date_of_its_decision() -> None:
    p = proposal("reduce_lr").model_copy(
        update={
            "status": "approved",
            "decided_by": "ana",
            "decided_at": datetime(2026, 11, 29, 3, 4, tzinfo=UTC),
        }
    )
    out = io.StringIO()
    render_proposal(Output(out, io.StringIO(), environ={}), p, now=NOW)
    assert re.search(r"^  decided +APPROVED by ana at Nov 29 03:04 UTC$", out.getvalue(), re.M)


def test_watch_dates_a_line_of_another_day() -> None:
    """`watch` lines carry the time of day only; a day change gets its own date line."""
    from datetime import timedelta

    from ito_tui.commands.watchfmt import WatchPrinter
    from ito_tui.contract import parse_event

    today = datetime(2026, 12, 1, 0, 0, 5, tzinfo=UTC)
    out = io.StringIO()
    printer = WatchPrinter(
        Output(out, io.StringIO(), environ={}), as_json=False, today=today.date()
    )
    for seq, at in enumerate((today - timedelta(hours=2), today - timedelta(hours=1), today), 1):
        printer.event(
            parse_event(
                {
                    "seq": seq,
                    "run_id": "run_1",
                    "type": "stage.completed",
                    "ts": at.isoformat(),
                    "data": {"stage": "mid_train"},
                }
            )
        )
    yesterday = (today - timedelta(days=1)).date()
    assert out.getvalue().splitlines() == [
        f"── {yesterday:%Y-%m-%d} (UTC) ──",
        f"22:00:05      1 {'stage.completed':<24} mid-train completed",
        f"23:00:05      2 {'stage.completed':<24} mid-train completed",
        f"── {today:%Y-%m-%d} (UTC) ──",
        f"00:00:05      3 {'stage.completed':<24} mid-train completed",
    ]


def test_watch_stamps_a_line_on_the_runs_clock() -> None:
    """A demo's event carries `sim_ts`: `watch` prints that time (and its day), as the TUI's
    Events list does, not the backend's wall clock (`--json` keeps both as sent)."""
    from datetime import timedelta

    from ito_tui.commands.watchfmt import WatchPrinter
    from ito_tui.contract import parse_event

    today = datetime(2026, 12, 1, 10, 0, 5, tzinfo=UTC)
    sim = today + timedelta(days=2, hours=5)
    out = io.StringIO()
    printer = WatchPrinter(
        Output(out, io.StringIO(), environ={}), as_json=False, today=today.date()
    )
    body = {"seq": 1, "run_id": "run_1", "type": "stage.completed", "ts": today.isoformat()}
    printer.event(parse_event({**body, "sim_ts": sim.isoformat(), "data": {"stage": "sft"}}))
    assert out.getvalue().splitlines() == [
        f"── {sim:%Y-%m-%d} (UTC) ──",
        f"15:00:05      1 {'stage.completed':<24} SFT completed",
    ]
