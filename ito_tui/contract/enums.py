"""Enumerations and patterns of the Itô training API v1: statuses, stage names, plan knobs."""

from __future__ import annotations

from enum import StrEnum

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
