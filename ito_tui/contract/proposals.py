"""Proposals, decisions, checkpoints and run requests of the Itô training API v1."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import Measure, Money, Request, Resource, Timestamp
from .enums import ProposalKind, ProposalStatus, StageName


class ProposalTrigger(Resource):
    reason: str
    step: int | None = None
    loss: Measure | None = None
    loss_z: Measure | None = None
    window: int | None = None


class ProposalAction(Resource):
    rollback_to_step: int | None = None
    checkpoint_id: str | None = None
    skip_batches: int | None = None
    lr_scale: float | None = None
    extra_budget_usd: Money | None = None
    node: str | None = None


class ProposalImpact(Resource):
    lost_steps: int = 0
    added_gpu_hours: float = 0.0
    added_usd: Money


class Proposal(Resource):
    """A human-gated action: only a person's POST moves it out of `pending` (or its expiry).

    `decided_by`, `decided_at` and `comment` record who decided, when and why. An expired
    proposal has `decided_at` (when it expired) and no `decided_by`: nobody decided it.
    """

    proposal_id: str
    run_id: str
    kind: ProposalKind | str
    status: ProposalStatus | str
    created_at: Timestamp
    expires_at: Timestamp
    on_expiry: Literal["reject"] | str = "reject"
    trigger: ProposalTrigger
    action: ProposalAction
    impact: ProposalImpact
    run_paused: bool = True
    decided_by: str | None = None
    decided_at: Timestamp | None = None
    comment: str | None = None


class Decision(Request):
    """Body of `POST /v1/proposals/{id}/approve|reject`."""

    comment: str | None = Field(default=None, max_length=2000)


class CancelRequest(Request):
    """Body of `POST /v1/runs/{id}/cancel`."""

    reason: str | None = Field(default=None, max_length=2000)


class Checkpoint(Resource):
    checkpoint_id: str
    stage: StageName | str
    step: int
    created_at: Timestamp
    size_gb: Measure
    blocking_s: Measure
    persist_s: Measure


class InjectRequest(Request):
    """Body of `POST /v1/sim/runs/{id}/inject` (simulator only)."""

    kind: Literal["node_failure", "loss_spike", "gate_fail", "slow_checkpoint"]
    params: dict[str, Any] = {}
