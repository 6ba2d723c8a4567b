"""`ito_tui.describe`: the phrases the CLI and the TUI both use for a restart proposal."""

from __future__ import annotations

from decimal import Decimal

from ito_tui.contract import ProposalAction, ProposalImpact, ProposalTrigger
from ito_tui.describe import action_phrases, evidence_phrases, impact_phrases, usd_exact


def test_evidence_lists_only_what_the_trigger_measured() -> None:
    t = ProposalTrigger(reason="loss spike", step=10871, loss=3.15912, loss_z=14.83, window=128)
    assert evidence_phrases(t) == ["step 10,871", "loss 3.159", "z 14.8", "window 128 steps"]
    assert evidence_phrases(ProposalTrigger(reason="node lost")) == []


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
    assert usd_exact("not money") == "not money"
