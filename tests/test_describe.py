"""`ito_tui.describe`: the words the CLI and the TUI both use for a proposal and a gate."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

import pytest

from ito_tui.contract import (
    GateResult,
    ProposalAction,
    ProposalImpact,
    ProposalTrigger,
)
from ito_tui.describe import (
    KINDS,
    action_phrases,
    action_text,
    consequence,
    cost_text,
    decision_text,
    evidence_phrases,
    evidence_text,
    expiry_text,
    gate_result_text,
    impact_phrases,
    mfu_text,
    proposal_words,
    reject_consequence,
)
from tests.support.proposals import NOW, proposal


def test_evidence_lists_only_what_the_trigger_measured() -> None:
    t = ProposalTrigger(reason="loss spike", step=10871, loss=3.15912, loss_z=14.83, window=128)
    assert evidence_phrases(t) == ["step 10,871", "loss 3.159", "z 14.8", "window 128 steps"]
    assert evidence_phrases(ProposalTrigger(reason="node lost")) == []


def test_evidence_does_not_repeat_what_the_reason_says() -> None:
    # The simulator's reason gives z and the window: the Why line read `… z=14.8 over a
    # 128-step window (…) · step 10,871 · loss 3.159 · z 14.8 · window 128 steps`.
    reason = "loss spike z=14.8 over a 128-step window (escalation threshold z >= 8)"
    t = ProposalTrigger(reason=reason, step=10871, loss=3.15912, loss_z=14.83, window=128)
    assert evidence_phrases(t, stated_in=reason) == ["step 10,871", "loss 3.159"]
    p = proposal("rollback_and_skip", trigger=t)
    assert evidence_text(p) == f"{reason} · step 10,871 · loss 3.159"
    # Said otherwise, or to other figures, it stays: the reason's z=14.9 is not 14.83.
    other = "step 10,871: loss 3.16, z=14.9, window of 128"
    assert evidence_phrases(t, stated_in=other) == ["z 14.8"]
    # A figure no float holds, or a diverged one, is never taken as stated.
    huge = ProposalTrigger(reason="x", step=10**400)
    assert evidence_phrases(huge, stated_in="step 1" + "0" * 400) == ["step 1e400"]
    diverged = ProposalTrigger(reason="x", loss=math.nan, loss_z=math.inf)
    said = "loss=nan z=inf loss 1" + "0" * 400 + " z=1" + "0" * 400
    assert evidence_phrases(diverged, stated_in=said) == ["loss NaN", "z ∞"]


def test_actions_are_phrased_and_backend_ids_shown_literally() -> None:
    a = ProposalAction(
        rollback_to_step=10728,
        checkpoint_id="ckpt_\x1b[31m38",
        skip_batches=0,
        lr_scale=0.5,
        extra_budget_usd=Decimal("1500"),
        node="gpu-07\u202e",
    )
    assert action_phrases(a) == [
        "roll back to step 10,728",
        "from checkpoint ckpt_␛[31m38",
        "scale LR × 0.5",
        "add $1,500.00 budget",
        "replace node gpu-07\\u202e",
    ]  # no "skip 0 batches": nothing is skipped
    assert action_phrases(ProposalAction()) == []


def test_impact_is_exact_to_the_cent() -> None:
    i = ProposalImpact(lost_steps=1430, added_gpu_hours=12.44, added_usd=Decimal("1234.5"))
    assert impact_phrases(i) == ["1,430 lost steps", "+12.4 GPU-h", "+$1,234.50"]


def test_a_budget_extension_is_never_worded_as_a_restart() -> None:
    p = proposal("extend_budget")
    words = proposal_words(p.kind)
    texts = [
        words.title, words.approve_label, words.reject_label, words.confirm_title,
        consequence(p), reject_consequence(p), cost_text(p), action_text(p),
    ]  # fmt: skip
    assert not [t for t in texts if "restart" in t.lower() and "not restarted" not in t]
    assert words.approve_label == "Approve budget…"
    assert consequence(p) == (
        "Approving raises the run's budget by $1,500.00; the run is not restarted."
    )
    assert cost_text(p) == "+12.4 GPU-h · +$1,500.00"  # no "0 lost steps": none can be lost
    assert "stops when its spend reaches" in reject_consequence(p)


@pytest.mark.parametrize(
    ("kind", "approve", "says"),
    [
        ("rollback_and_skip", "Approve restart…", "restarts the run from step 9,800 and skips 300"),
        ("reduce_lr", "Approve LR change…", "scales the run's learning rate × 0.5, restarting"),
        ("replace_node", "Approve node swap…", "replaces node gpu-07 and restarts the run"),
        ("extend_budget", "Approve budget…", "raises the run's budget by $1,500.00"),
    ],
)
def test_each_kind_has_its_own_words(kind: str, approve: str, says: str) -> None:
    p = proposal(kind)
    words = proposal_words(kind)
    assert words.approve_label == approve
    assert says in consequence(p)
    others = [w for k, w in KINDS.items() if k != kind]
    assert all(w.title != words.title and w.confirm_title != words.confirm_title for w in others)
    if kind != "extend_budget":
        assert cost_text(p).startswith("1,071 lost steps")
        assert reject_consequence(p).startswith("Rejecting resumes the run where it paused")


def test_an_unknown_kind_is_titled_as_sent_and_safe() -> None:
    words = proposal_words("warm\x1b[2Jrestart")
    assert words.title == "warm␛[2Jrestart" and words.approve_label == "Approve…"


def test_the_expiry_and_the_decision_carry_their_date_when_not_today() -> None:
    p = proposal("rollback_and_skip")
    assert expiry_text(p, NOW) == (
        "Expires in 12m05s (19:12:05 UTC); then it is rejected automatically."
    )
    decided = p.model_copy(
        update={"status": "approved", "decided_by": "ana", "decided_at": NOW - timedelta(days=2)}
    )
    assert decision_text(decided, NOW) == "APPROVED by ana at Nov 29 19:00 UTC"
    expired = p.model_copy(update={"status": "expired", "decided_at": NOW})
    assert decision_text(expired, NOW) == (
        "EXPIRED unanswered at 19:00:00 UTC; rejected as its expiry rule says"
    )


def test_a_failed_gate_reads_as_what_it_needed() -> None:
    r = GateResult(
        benchmark="mmlu", metric="acc_5shot", value=62.972, threshold=65.1, comparator=">=",
        passed=False,
    )  # fmt: skip
    assert gate_result_text(r, verdict=True) == "mmlu acc_5shot 62.972 (needs >= 65.1) FAIL"
    assert gate_result_text(r) == "mmlu acc_5shot 62.972 (needs >= 65.1)"


@pytest.mark.parametrize(
    ("frac", "precision", "text"),
    [
        (0.4134, "bf16", "41.3%"),
        (0.4134, "float8_rowwise", "41.3%"),
        (None, "float8_rowwise", "not measured (fp8)"),
        (None, "float8_tensorwise", "not measured (fp8)"),
        (None, "mxfp8", "not measured (fp8)"),
        (None, "FP8_E4M3", "not measured (fp8)"),  # a precision the contract does not list
        (None, "bf16", "—"),
        (float("nan"), "bf16", "NaN"),  # a backend's non-finite value is data
        (1e300, "bf16", ">999%"),
    ],
)
def test_an_mfu_reads_the_same_everywhere(frac: float | None, precision: str, text: str) -> None:
    assert mfu_text(frac, precision) == text
