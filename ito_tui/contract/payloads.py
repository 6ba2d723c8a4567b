"""The typed `data` payloads of the event stream's envelopes, one model per event type."""

from __future__ import annotations

from typing import Literal

from .common import JsonObject, Measure, Money, Resource
from .enums import StageName
from .proposals import Checkpoint, Proposal
from .resources import Failure, Gate, GateResult, Plan, Spend, StageProgress


class Payload(Resource):
    """Base of event payloads (lenient: unknown fields are ignored)."""


class RunAccepted(Payload):
    booking_id: str
    state: str = "queued"
    plan: Plan | None = None


class RunStateChanged(Payload):
    from_state: str | None = None
    to_state: str
    reason: str | None = None


class StageStarted(Payload):
    stage: StageName | str
    total_steps: int | None = None
    total_tokens: int | None = None


class StageProgressed(Payload):
    stage: StageName | str
    progress: StageProgress


class StageCompleted(Payload):
    stage: StageName | str
    summary: JsonObject = {}


class StageSkipped(Payload):
    stage: StageName | str
    reason: str = ""


class StageFailed(Payload):
    stage: StageName | str
    reason: str = ""
    gate_id: str | None = None


class ManifestReady(Payload):
    documents: int
    tokens: int
    shards: int = 0
    sources: dict[str, int] = {}


class DedupCompleted(Payload):
    documents_before: int
    documents_after: int
    removed_frac: float
    method: str = "minhash"


class DecontamCompleted(Payload):
    per_benchmark: dict[str, int] = {}
    """Contaminated documents removed, per eval benchmark."""
    removed_documents: int = 0


class LadderCompleted(Payload):
    decision: Literal["proceed", "stop"] | str
    ladder_model: str = "150M"
    reference_loss: float | None = None
    candidate_loss: float | None = None
    detail: str = ""


class PlanSelected(Payload):
    plan: Plan


class PlanWarning(Payload):
    code: str
    message: str


class CheckpointSaved(Payload):
    checkpoint: Checkpoint
    write_gb_per_s: Measure | None = None


class CheckpointFailed(Payload):
    step: int
    reason: str


class FaultDetected(Payload):
    fault_id: str
    kind: str
    node: str | None = None
    step: int | None = None
    detected_after_s: float


class FaultRecovered(Payload):
    fault_id: str
    kind: str
    node: str | None = None
    resumed_after_s: float
    lost_steps: int = 0
    resumed_from_step: int | None = None


class SloBreached(Payload):
    slo: Literal["detect", "resume"] | str
    fault_id: str | None = None
    value_s: float
    limit_s: float


class LossSpikeDetected(Payload):
    step: int
    loss: Measure
    loss_z: Measure
    window: int = 128
    action: Literal["skipped", "escalated"] | str


class ProposalChanged(Payload):
    proposal: Proposal


class GateStarted(Payload):
    gate: Gate


class GateResultReported(Payload):
    gate_id: str
    result: GateResult


class GateDecided(Payload):
    gate: Gate


class BudgetWarning(Payload):
    threshold_frac: float
    usd_spent: Money
    budget_usd: Money


class RunEnded(Payload):
    spend: Spend | None = None
    failure: Failure | None = None
    detail: str = ""


class NodeChanged(Payload):
    """`node.degraded`, `node.failed`, `node.replaced`, `node.recovered` (API.md v1.1)."""

    hostname: str
    replica_id: str | None = None
    reason: str | None = None
    replaced_by: str | None = None
    """On `node.replaced`: the spare that took the failed node's place."""
    fault_id: str | None = None


class StragglerChanged(Payload):
    """`straggler.detected` / `straggler.cleared`."""

    hostname: str
    rank: int | None = None
    step_time_s: Measure | None = None
    fleet_p50_s: Measure | None = None


class QuorumChanged(Payload):
    quorum_id: int
    participants: int
    min_replicas: int | None = None
