"""Resources of the Itô training API v1: capabilities, bookings, specs, plans, gates, runs.

Enumerations live in `.enums`, telemetry in `.telemetry`, proposals in `.proposals`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .common import Frac, JsonObject, Measure, Money, Request, Resource, Timestamp
from .enums import (
    DATA_REF_PATTERN,
    MODEL_SIZE_PATTERN,
    TERMINAL_RUN_STATES,
    ActivationCheckpoint,
    BookingStatus,
    CapabilityStatus,
    Comparator,
    DataKind,
    FabricKind,
    FailureKind,
    FaultTolerance,
    GateRule,
    GateStatus,
    PostTraining,
    Precision,
    RunStateName,
    ServerMode,
    StageName,
    StageState,
)

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
    log_line_bytes: int = Field(4096, description="The server cuts a log line at this many bytes.")
    log_retention: int = Field(100_000, description="How many log lines per run the server keeps.")
    fleet_refresh_s: float = Field(
        5.0, description="Clients refresh the fleet snapshot at most this often."
    )


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
