"""Proposals of each kind, shaped as desk_sim makes them, for the wording tests (the CLI's
and the TUI's modal must say the same of the same proposal)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from ito_tui.contract import Proposal, ProposalAction, ProposalImpact, ProposalTrigger

NOW = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)


def proposal(kind: str, **fields: object) -> Proposal:
    """A proposal of `kind` shaped as desk_sim makes it (outcomes.py, incidents.py)."""
    if kind == "extend_budget":
        body: dict[str, object] = {
            "trigger": ProposalTrigger(reason="projected spend $1,650 exceeds the budget"),
            "action": ProposalAction(extra_budget_usd=Decimal("1500")),
            "impact": ProposalImpact(lost_steps=0, added_gpu_hours=12.4, added_usd=Decimal("1500")),
            "run_paused": False,
        }
    else:
        body = {
            "trigger": ProposalTrigger(reason="loss spike", step=10871, loss=3.159, loss_z=14.8),
            "action": ProposalAction(
                rollback_to_step=9800, checkpoint_id="ckpt_1", skip_batches=300,
                lr_scale=0.5 if kind == "reduce_lr" else None,
                node="gpu-07" if kind == "replace_node" else None,
            ),
            "impact": ProposalImpact(lost_steps=1071, added_gpu_hours=3.2, added_usd=Decimal("31")),
            "run_paused": True,
        }  # fmt: skip
    body.update(fields)
    return Proposal.model_validate(
        {
            "proposal_id": "prop_1",
            "run_id": "run_1",
            "kind": kind,
            "status": "pending",
            "created_at": NOW - timedelta(minutes=3),
            "expires_at": NOW + timedelta(seconds=725),
            **body,
        }
    )
