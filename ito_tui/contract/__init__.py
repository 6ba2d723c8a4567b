"""Pydantic v2 models of the Itô training API v1 (API.md). Pure data.

Every model is built lazily (`defer_build`): its validator and serializer are
made the first time it is used, so a command that reads one kind of answer
does not pay for building the ~100 others (issue 8, #2b). `build_models()`
builds them all now, for a process that uses most of them (the simulator).

The event models (`.events`, ~40 classes) are imported on first use of any of
their names: a command that reads runs or bookings never defines them (~15 ms
of `ito-tui runs --json`, issue 8, #2b). `from ito_tui.contract import X`
works the same for every name either way.
"""

import importlib
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .common import (
    API_VERSION,
    JsonObject,
    Money,
    OnRunClock,
    Page,
    Request,
    Resource,
    Timestamp,
    now_utc,
)
from .errors import ERROR_STATUS, PROBLEM_CONTENT_TYPE, FieldError, Problem

if TYPE_CHECKING:
    from .events import (
        EVENT_CLASSES,
        EVENT_KINDS,
        EVENT_PAYLOADS,
        TERMINAL_EVENT_TYPES,
        AnyEvent,
        BudgetWarning,
        CheckpointFailed,
        CheckpointSaved,
        DecontamCompleted,
        DedupCompleted,
        EventBase,
        EventParseError,
        FaultDetected,
        FaultRecovered,
        GateDecided,
        GateResultReported,
        GateStarted,
        LadderCompleted,
        LossSpikeDetected,
        ManifestReady,
        NodeChanged,
        PlanSelected,
        PlanWarning,
        ProposalChanged,
        QuorumChanged,
        RunAccepted,
        RunEnded,
        RunStateChanged,
        SloBreached,
        StageCompleted,
        StageFailed,
        StageProgressed,
        StageSkipped,
        StageStarted,
        StragglerChanged,
        UnknownEvent,
        event_adapter,
        event_to_json,
        make_event,
        parse_event,
    )
from .diagnose import (
    LOG_LEVEL_ORDER,
    Fleet,
    FleetNode,
    GpuCounters,
    LogLevel,
    LogLine,
    LogPage,
    LogSource,
    LogTruncated,
    NodeState,
    Quorum,
    Replica,
    ReplicaState,
)
from .enums import (
    ACTIVE_RUN_STATES,
    DATA_REF_PATTERN,
    MODEL_SIZE_PATTERN,
    STAGE_ORDER,
    TERMINAL_RUN_STATES,
    TRAINING_STAGES,
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
    ProposalKind,
    ProposalStatus,
    RunStateName,
    ServerMode,
    StageName,
    StageState,
)
from .proposals import (
    CancelRequest,
    Checkpoint,
    Decision,
    InjectRequest,
    Proposal,
    ProposalAction,
    ProposalImpact,
    ProposalTrigger,
)
from .resources import (
    Booking,
    Capabilities,
    Capability,
    Estimate,
    Fabric,
    Failure,
    FaultRecord,
    Gate,
    GateResult,
    GoodputSummary,
    Limits,
    Node,
    Plan,
    Refusal,
    Run,
    RunSummary,
    ServerInfo,
    SimOptions,
    Spend,
    SshInfo,
    Stage,
    StageEstimate,
    StageProgress,
    TrainingSpec,
    TrainingSpecEcho,
    Warning_,
    WhoAmI,
    model_params,
)
from .telemetry import (
    CheckpointStats,
    Goodput,
    RlStats,
    TelemetryPage,
    TelemetrySample,
)


def __getattr__(name: str) -> object:
    # Called only for a name not defined here: the event models, imported now.
    # (`from . import events` would ask this function for "events" first.)
    if not name.startswith("__"):
        events = importlib.import_module(".events", __name__)
        if name in events.__all__:
            return getattr(events, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _subclasses(cls: type[BaseModel]) -> list[type[BaseModel]]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


def build_models() -> None:
    """Build every contract model now instead of on its first use."""
    from .events import EventBase

    for base in (Resource, Request, EventBase):
        for model in _subclasses(base):
            model.model_rebuild()
            # A `TypeAdapter` of a model defers its own build whenever the model's
            # config says `defer_build`, even once the model is built: built now,
            # adapters made later (FastAPI's, per body parameter) build at once too.
            model.model_config["defer_build"] = False


__all__ = [
    "ACTIVE_RUN_STATES",
    "API_VERSION",
    "DATA_REF_PATTERN",
    "ERROR_STATUS",
    "EVENT_CLASSES",
    "EVENT_KINDS",
    "EVENT_PAYLOADS",
    "LOG_LEVEL_ORDER",
    "MODEL_SIZE_PATTERN",
    "PROBLEM_CONTENT_TYPE",
    "STAGE_ORDER",
    "TERMINAL_EVENT_TYPES",
    "TERMINAL_RUN_STATES",
    "TRAINING_STAGES",
    "ActivationCheckpoint",
    "AnyEvent",
    "Booking",
    "BookingStatus",
    "BudgetWarning",
    "CancelRequest",
    "Capabilities",
    "Capability",
    "CapabilityStatus",
    "Checkpoint",
    "CheckpointFailed",
    "CheckpointSaved",
    "CheckpointStats",
    "Comparator",
    "DataKind",
    "Decision",
    "DecontamCompleted",
    "DedupCompleted",
    "Estimate",
    "EventBase",
    "EventParseError",
    "Fabric",
    "FabricKind",
    "Failure",
    "FailureKind",
    "FaultDetected",
    "FaultRecord",
    "FaultRecovered",
    "FaultTolerance",
    "FieldError",
    "Fleet",
    "FleetNode",
    "Gate",
    "GateDecided",
    "GateResult",
    "GateResultReported",
    "GateRule",
    "GateStarted",
    "GateStatus",
    "Goodput",
    "GoodputSummary",
    "GpuCounters",
    "InjectRequest",
    "JsonObject",
    "LadderCompleted",
    "Limits",
    "LogLevel",
    "LogLine",
    "LogPage",
    "LogSource",
    "LogTruncated",
    "LossSpikeDetected",
    "ManifestReady",
    "Money",
    "Node",
    "NodeChanged",
    "NodeState",
    "OnRunClock",
    "Page",
    "Plan",
    "PlanSelected",
    "PlanWarning",
    "PostTraining",
    "Precision",
    "Problem",
    "Proposal",
    "ProposalAction",
    "ProposalChanged",
    "ProposalImpact",
    "ProposalKind",
    "ProposalStatus",
    "ProposalTrigger",
    "Quorum",
    "QuorumChanged",
    "Refusal",
    "Replica",
    "ReplicaState",
    "Request",
    "Resource",
    "RlStats",
    "Run",
    "RunAccepted",
    "RunEnded",
    "RunStateChanged",
    "RunStateName",
    "RunSummary",
    "ServerInfo",
    "ServerMode",
    "SimOptions",
    "SloBreached",
    "Spend",
    "SshInfo",
    "Stage",
    "StageCompleted",
    "StageEstimate",
    "StageFailed",
    "StageName",
    "StageProgress",
    "StageProgressed",
    "StageSkipped",
    "StageStarted",
    "StageState",
    "StragglerChanged",
    "TelemetryPage",
    "TelemetrySample",
    "Timestamp",
    "TrainingSpec",
    "TrainingSpecEcho",
    "UnknownEvent",
    "Warning_",
    "WhoAmI",
    "build_models",
    "event_adapter",
    "event_to_json",
    "make_event",
    "model_params",
    "now_utc",
    "parse_event",
]
