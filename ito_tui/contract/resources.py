"""Resources of the Itô training API v1: bookings, specs, plans, runs, gates, telemetry."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field

from .common import Frac, JsonObject, Measure, Money, Request, Resource, Timestamp

MODEL_SIZE_PATTERN = r"^\d+(\.\d+)?[MB]$"
DATA_REF_PATTERN = r"^(s3://\S+|hf://[^/\s]+/[^@\s]+(@\S+)?|catalog://[^@\s]+@\S+|file:///\S*)$"


# ---------------------------------------------------------------- enums


class BookingStatus(StrEnum):
    pending = "pending"
    completed = "completed"
    expired = "expired"
    cancelled = "cancelled"


class FabricKind(StrEnum):
    infiniband = "infiniband"
    roce = "roce"
    ethernet = "ethernet"


class CapabilityStatus(StrEnum):
    available = "available"
    not_implemented = "not_implemented"
    degraded = "degraded"
    disabled = "disabled"


class DataKind(StrEnum):
    curated = "curated"
    custom = "custom"


class PostTraining(StrEnum):
    """The last phase of the post-training chain SFT → DPO → RLVR."""

    sft = "sft"
    dpo = "dpo"
    rlvr = "rlvr"


class StageName(StrEnum):
    """Pipeline stages, in pipeline order."""

    data_prep = "data_prep"
    ladder = "ladder"
    plan = "plan"
    pretrain = "pretrain"
    mid_train = "mid_train"
    long_context = "long_context"
    sft = "sft"
    dpo = "dpo"
    rlvr = "rlvr"


STAGE_ORDER: tuple[StageName, ...] = tuple(StageName)
TRAINING_STAGES = frozenset(
    {
        StageName.pretrain,
        StageName.mid_train,
        StageName.long_context,
        StageName.sft,
        StageName.dpo,
        StageName.rlvr,
    }
)
"""Stages that train (have steps, telemetry and an eval gate)."""


class StageState(StrEnum):
    pending = "pending"
    running = "running"
    gate_eval = "gate_eval"
    passed = "passed"
    failed = "failed"
    skipped = "skipped"
    cancelled = "cancelled"


class RunStateName(StrEnum):
    queued = "queued"
    preflight = "preflight"
    running = "running"
    awaiting_approval = "awaiting_approval"
    recovering = "recovering"
    gate_eval = "gate_eval"
    cancelling = "cancelling"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"


TERMINAL_RUN_STATES = frozenset(
    {RunStateName.completed, RunStateName.failed, RunStateName.cancelled}
)
ACTIVE_RUN_STATES = frozenset(set(RunStateName) - TERMINAL_RUN_STATES)


class FailureKind(StrEnum):
    gate_failed = "gate_failed"
    budget_exhausted = "budget_exhausted"
    cancelled = "cancelled"
    fatal = "fatal"


class GateStatus(StrEnum):
    pending = "pending"
    running = "running"
    passed = "passed"
    failed = "failed"


class Comparator(StrEnum):
    ge = ">="
    gt = ">"
    le = "<="
    lt = "<"


class GateRule(StrEnum):
    absolute = "absolute"
    no_regression = "no_regression"
    relative_gain = "relative_gain"


class ProposalKind(StrEnum):
    rollback_and_skip = "rollback_and_skip"
    reduce_lr = "reduce_lr"
    extend_budget = "extend_budget"
    replace_node = "replace_node"


class ProposalStatus(StrEnum):
    pending = "pending"
    approved = "approved"
    rejected = "rejected"
    expired = "expired"
    executed = "executed"


class Precision(StrEnum):
    bf16 = "bf16"
    float8_rowwise = "float8_rowwise"
    float8_tensorwise = "float8_tensorwise"
    mxfp8 = "mxfp8"


class ActivationCheckpoint(StrEnum):
    none = "none"
    selective = "selective"
    full = "full"


class FaultTolerance(StrEnum):
    none = "none"
    torchft_hsdp = "torchft_hsdp"
    torchft_diloco = "torchft_diloco"


class ServerMode(StrEnum):
    production = "production"
    simulated = "simulated"
    scaffold = "scaffold"


# ---------------------------------------------------------------- capabilities


class Capability(Resource):
    name: str
    status: CapabilityStatus | str
    detail: str | None = None


class ServerInfo(Resource):
    name: str
    version: str
    mode: ServerMode | str = ServerMode.production
    """`simulated` for desk_sim: clients show DEMO whenever they see it."""


class Limits(Resource):
    max_budget_usd: Money
    event_retention: int = Field(description="How many events per run the server replays.")
    heartbeat_s: float = Field(description="Seconds between SSE keepalive comments.")


class Capabilities(Resource):
    api_version: str
    server: ServerInfo
    capabilities: list[Capability]
    model_sizes: list[str] = []
    gpu_skus: list[str] = []
    post_training: list[str] = []
    target_capabilities: list[str] = []
    limits: Limits

    def status_of(self, name: str) -> str:
        """The status of capability `name`; an unlisted capability is `not_implemented`."""
        for cap in self.capabilities:
            if cap.name == name:
                return str(cap.status)
        return CapabilityStatus.not_implemented.value

    def has(self, name: str) -> bool:
        """Whether capability `name` can be used (available or degraded)."""
        return self.status_of(name) in (CapabilityStatus.available, CapabilityStatus.degraded)

    @property
    def simulated(self) -> bool:
        return str(self.server.mode) == ServerMode.simulated.value


class WhoAmI(Resource):
    operator: str


# ---------------------------------------------------------------- bookings


class Node(Resource):
    hostname: str
    ip: str
    gpus: int
    healthy: bool = True


class SshInfo(Resource):
    user: str
    port: int = 22
    jump_host: str | None = None
    host_key_fingerprints: list[str] = []


class Fabric(Resource):
    kind: FabricKind | str
    gbit_per_s_per_gpu: float


class Booking(Resource):
    """A GPU booking made by ito-compute. Only `completed` bookings can take a run."""

    booking_id: str
    status: BookingStatus | str
    gpu_sku: str
    gpus_per_node: int
    node_count: int
    nodes: list[Node] = []
    ssh: SshInfo
    fabric: Fabric
    starts_at: Timestamp
    ends_at: Timestamp
    price_usd_per_gpu_hour: Money
    active_run_id: str | None = None

    @property
    def gpu_count(self) -> int:
        return self.gpus_per_node * self.node_count


# ---------------------------------------------------------------- training spec


class SimOptions(Request):
    """Simulator-only knobs; a real backend rejects or ignores them."""

    seed: int | None = None
    time_scale: float | None = Field(default=None, gt=0)
    scenario: str | None = None
    chaos: float | None = Field(default=None, ge=0)


class TrainingSpec(Request):
    """Request body of `POST /v1/estimates` and `POST /v1/runs`."""

    booking_id: str
    model_size: Annotated[str, Field(pattern=MODEL_SIZE_PATTERN)]
    data_ref: Annotated[str, Field(pattern=DATA_REF_PATTERN)]
    data_kind: DataKind = DataKind.curated
    target_capability: str
    budget_usd: Money = Field(gt=0)
    post_training: PostTraining | None = None
    target_tokens: int | None = Field(default=None, gt=0, description="Default 20 × params.")
    seq_len: int = Field(default=8192, gt=0, le=1_048_576)
    sim: SimOptions | None = None


class TrainingSpecEcho(Resource):
    """A TrainingSpec as the server echoes it back inside a Run (lenient)."""

    booking_id: str
    model_size: str
    data_ref: str
    data_kind: DataKind | str = DataKind.curated
    target_capability: str
    budget_usd: Money
    post_training: PostTraining | str | None = None
    target_tokens: int | None = None
    seq_len: int = 8192


def model_params(model_size: str) -> float:
    """Parameter count of a model size string such as `8B` or `150M`."""
    unit = model_size[-1]
    value = float(model_size[:-1])
    return value * (1e9 if unit == "B" else 1e6)


# ---------------------------------------------------------------- plan & estimate


class Plan(Resource):
    world_size: int
    dp_replicate: int
    dp_shard: int
    tp: int
    pp: int
    cp: int
    precision: Precision | str
    activation_checkpoint: ActivationCheckpoint | str
    compile: bool
    fault_tolerance: FaultTolerance | str
    local_batch_seqs: int
    global_batch_tokens: int
    est_mem_per_gpu_gib: float
    hbm_per_gpu_gib: float
    est_tokens_per_s_per_gpu: float
    est_mfu_frac: Frac | None = None
    """Null under fp8, where MFU against the bf16 peak would mislead."""
    rationale: list[str] = []


class Refusal(Resource):
    code: str
    reason: str
    field: str | None = None
    evidence: JsonObject = {}
    suggestion: str | None = None


class Warning_(Resource):
    code: str
    message: str


class StageEstimate(Resource):
    stage: StageName | str
    tokens: int
    gpu_hours: float
    wall_clock_h: float
    usd: Money


class Estimate(Resource):
    plan: Plan | None = None
    stages: list[StageEstimate] = []
    total_gpu_hours: float
    wall_clock_h_p50: float
    wall_clock_h_p90: float
    usd_p50: Money
    usd_p90: Money
    fits_budget: bool
    fits_booking_window: bool
    expected_interruptions: float
    refusals: list[Refusal] = []
    warnings: list[Warning_] = []

    @property
    def refused(self) -> bool:
        return bool(self.refusals)


# ---------------------------------------------------------------- gates & stages


class GateResult(Resource):
    benchmark: str
    metric: str
    value: Measure
    stderr: Measure = 0.0
    threshold: Measure
    comparator: Comparator | str = Comparator.ge
    rule: GateRule | str = GateRule.absolute
    reference_value: Measure | None = None
    passed: bool


class Gate(Resource):
    gate_id: str
    stage: StageName | str
    battery_id: str
    status: GateStatus | str
    results: list[GateResult] = []

    @property
    def failing(self) -> list[GateResult]:
        return [r for r in self.results if not r.passed]


class StageProgress(Resource):
    step: int = 0
    total_steps: int = 0
    tokens: int = 0
    total_tokens: int = 0
    frac: Frac = 0.0
    eta_s: Measure | None = None
    """Infinite or NaN when the backend divides by a throughput of zero: data."""


class Stage(Resource):
    name: StageName | str
    state: StageState | str = StageState.pending
    started_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    progress: StageProgress | None = None
    gate: Gate | None = None
    summary: JsonObject = {}


# ---------------------------------------------------------------- runs


class Failure(Resource):
    kind: FailureKind | str
    gate_id: str | None = None
    detail: str = ""


class Spend(Resource):
    gpu_hours: Measure = 0.0
    usd_spent: Money
    usd_committed: Money
    budget_usd: Money


class GoodputSummary(Resource):
    """The run's goodput so far; measured, so each fraction may be null or non-finite."""

    scheduling_frac: Frac | None = 1.0
    runtime_frac: Frac | None = 1.0
    program_frac: Frac | None = 1.0
    ml_productivity_frac: Frac | None = 1.0


class FaultRecord(Resource):
    """A fault as the run snapshot keeps it (added field; see fault.* events)."""

    fault_id: str
    kind: str
    node: str | None = None
    step: int | None = None
    detected_after_s: float | None = None
    resumed_after_s: float | None = None
    lost_steps: int | None = None
    recovered: bool = False
    slo_breached: list[str] = []


class Run(Resource):
    run_id: str
    booking_id: str
    spec: TrainingSpecEcho
    state: RunStateName | str
    failure: Failure | None = None
    plan: Plan | None = None
    estimate: Estimate | None = None
    stages: list[Stage] = []
    current_stage: StageName | str | None = None
    spend: Spend
    goodput: GoodputSummary | None = None
    pending_proposal_ids: list[str] = []
    last_event_seq: int = 0
    created_at: Timestamp
    updated_at: Timestamp
    faults: list[FaultRecord] = []
    """Added field: faults so far, so a resync restores the fault timeline."""
    operator: str | None = None
    """Added field: who submitted the run."""

    @property
    def terminal(self) -> bool:
        return str(self.state) in {s.value for s in TERMINAL_RUN_STATES}


class RunSummary(Resource):
    run_id: str
    booking_id: str
    state: RunStateName | str
    current_stage: StageName | str | None = None
    stage_progress_frac: Frac | None = None
    spend: Spend
    pending_proposal_ids: list[str] = []
    failure: Failure | None = None
    model_size: str | None = None
    created_at: Timestamp
    updated_at: Timestamp


# ---------------------------------------------------------------- telemetry


class Goodput(Resource):
    """ML goodput = scheduling × runtime × program (Google's definition).

    Measured: each fraction may be null (not measured yet) or non-finite (0/0).
    """

    scheduling_frac: Frac | None
    runtime_frac: Frac | None
    program_frac: Frac | None
    ml_productivity_frac: Frac | None
    badput_s: dict[str, Measure | None] = {}


class CheckpointStats(Resource):
    last_step: int | None = None
    size_gb: Measure | None = None
    blocking_s: Measure | None = None
    persist_s: Measure | None = None
    write_gb_per_s: Measure | None = None
    age_s: Measure | None = None


class RlStats(Resource):
    reward_mean: Measure | None
    entropy: Measure | None
    max_staleness_steps: int
    staleness_bound: int
    filtered_group_frac: Frac | None
    ess_frac: Frac | None


class TelemetrySample(Resource):
    """One telemetry sample. Every measured number may be null (no value this sample)
    or NaN / ±Infinity (a diverged loss): API.md v1.1 makes both legal on the wire, and
    the client shows them as such. Identities and counts (seq, step, tokens) are ints."""

    seq: int
    ts: Timestamp
    stage: StageName | str
    step: int
    tokens_seen: int
    loss: Measure | None
    loss_z: Measure | None = None
    grad_norm: Measure | None = None
    lr: Measure | None = None
    tokens_per_s_per_gpu: Measure | None
    mfu_frac: Frac | None = None
    mem_max_reserved_gib: Measure | None
    goodput: Goodput
    interruptions_total: int = 0
    interruptions_per_1k_gpu_hours: Measure | None = 0.0
    checkpoint: CheckpointStats = Field(default_factory=CheckpointStats)
    spend_usd: Money
    rl: RlStats | None = None
    metrics: dict[str, Measure | None] = {}
    """Every further scalar the trainer logs, under torchtitan's names (API.md v1.1)."""


class TelemetryPage(Resource):
    items: list[TelemetrySample]
    next_since_seq: int | None = None


# ---------------------------------------------------------------- proposals & checkpoints


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
