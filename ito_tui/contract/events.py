"""The event stream's envelopes (payloads in `.payloads`), with an `UnknownEvent` fallback.

Every SSE message of `GET /v1/runs/{id}/events` carries one envelope
`{seq, run_id, type, ts, sim_ts?, stage?, data{…}}`. `parse_event` turns raw
JSON into the typed event for its `type`; a type this client does not know
becomes an `UnknownEvent` (shown raw, never a crash), and a body that is not an
envelope raises `EventParseError` (a ValueError), never a raw pydantic error.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Tag,
    TypeAdapter,
    ValidationError,
)

from .common import JsonObject, OnRunClock, Timestamp
from .enums import StageName
from .payloads import (
    BudgetWarning,
    CheckpointFailed,
    CheckpointSaved,
    DecontamCompleted,
    DedupCompleted,
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
)
from .resources import Run
from .telemetry import TelemetrySample

__all__ = [
    "EVENT_CLASSES",
    "EVENT_KINDS",
    "EVENT_PAYLOADS",
    "TERMINAL_EVENT_TYPES",
    "AnyEvent",
    "BudgetWarning",
    "CheckpointFailed",
    "CheckpointSaved",
    "DecontamCompleted",
    "DedupCompleted",
    "EventBase",
    "EventParseError",
    "FaultDetected",
    "FaultRecovered",
    "GateDecided",
    "GateResultReported",
    "GateStarted",
    "LadderCompleted",
    "LossSpikeDetected",
    "ManifestReady",
    "NodeChanged",
    "PlanSelected",
    "PlanWarning",
    "ProposalChanged",
    "QuorumChanged",
    "RunAccepted",
    "RunEnded",
    "RunStateChanged",
    "SloBreached",
    "StageCompleted",
    "StageFailed",
    "StageProgressed",
    "StageSkipped",
    "StageStarted",
    "StragglerChanged",
    "UnknownEvent",
    "event_adapter",
    "event_to_json",
    "make_event",
    "parse_event",
]
# ---------------------------------------------------------------- envelopes


class EventBase(BaseModel, OnRunClock):
    """The SSE envelope. `seq` is per-run, strictly increasing, and the SSE `id`."""

    model_config = ConfigDict(
        extra="ignore", frozen=True, defer_build=True, ser_json_inf_nan="strings"
    )

    seq: int
    run_id: str
    type: str
    ts: Timestamp
    sim_ts: Timestamp | None = None
    stage: StageName | str | None = None

    kind: ClassVar[str] = "other"
    """Event-log category: gates, faults, checkpoints, proposals, budget, stages, run, other."""
    terminal: ClassVar[bool] = False


class UnknownEvent(EventBase):
    """An event type this client does not know: kept raw, shown raw, never a crash."""

    data: JsonObject = {}


def _event(
    type_: str, payload: type[BaseModel], kind: str, terminal: bool = False
) -> type[EventBase]:
    """Build the envelope class of one event type (keeps 34 near-identical classes out)."""
    name = "".join(part.capitalize() for part in type_.replace(".", "_").split("_")) + "Event"
    cls = type(
        name,
        (EventBase,),
        {
            "__annotations__": {"type": Literal[type_], "data": payload},
            "__module__": __name__,
            "__doc__": f"The `{type_}` event.",
            "kind": kind,
            "terminal": terminal,
        },
    )
    return cls


EVENT_PAYLOADS: dict[str, tuple[type[BaseModel], str]] = {
    "run.accepted": (RunAccepted, "run"),
    "run.state_changed": (RunStateChanged, "run"),
    "stage.started": (StageStarted, "stages"),
    "stage.progress": (StageProgressed, "stages"),
    "stage.completed": (StageCompleted, "stages"),
    "stage.skipped": (StageSkipped, "stages"),
    "stage.failed": (StageFailed, "stages"),
    "data.manifest_ready": (ManifestReady, "stages"),
    "data.dedup_completed": (DedupCompleted, "stages"),
    "data.decontam_completed": (DecontamCompleted, "stages"),
    "ladder.completed": (LadderCompleted, "stages"),
    "plan.selected": (PlanSelected, "stages"),
    "plan.warning": (PlanWarning, "stages"),
    "checkpoint.saved": (CheckpointSaved, "checkpoints"),
    "checkpoint.failed": (CheckpointFailed, "checkpoints"),
    "fault.detected": (FaultDetected, "faults"),
    "fault.recovered": (FaultRecovered, "faults"),
    "slo.breached": (SloBreached, "faults"),
    "loss.spike_detected": (LossSpikeDetected, "faults"),
    "proposal.created": (ProposalChanged, "proposals"),
    "proposal.approved": (ProposalChanged, "proposals"),
    "proposal.rejected": (ProposalChanged, "proposals"),
    "proposal.expired": (ProposalChanged, "proposals"),
    "proposal.executed": (ProposalChanged, "proposals"),
    "gate.started": (GateStarted, "gates"),
    "gate.result": (GateResultReported, "gates"),
    "gate.passed": (GateDecided, "gates"),
    "gate.failed": (GateDecided, "gates"),
    "telemetry": (TelemetrySample, "telemetry"),
    "budget.warning": (BudgetWarning, "budget"),
    "run.completed": (RunEnded, "run"),
    "run.failed": (RunEnded, "run"),
    "run.cancelled": (RunEnded, "run"),
    "resync": (Run, "run"),
    "node.degraded": (NodeChanged, "fleet"),
    "node.failed": (NodeChanged, "fleet"),
    "node.replaced": (NodeChanged, "fleet"),
    "node.recovered": (NodeChanged, "fleet"),
    "straggler.detected": (StragglerChanged, "fleet"),
    "straggler.cleared": (StragglerChanged, "fleet"),
    "quorum.changed": (QuorumChanged, "fleet"),
}
TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.failed", "run.cancelled"})
EVENT_KINDS = (
    "gates",
    "faults",
    "checkpoints",
    "proposals",
    "budget",
    "stages",
    "run",
    "telemetry",
    "fleet",
)

EVENT_CLASSES: dict[str, type[EventBase]] = {
    t: _event(t, payload, kind, t in TERMINAL_EVENT_TYPES)
    for t, (payload, kind) in EVENT_PAYLOADS.items()
}

# Named aliases for the classes code refers to directly.
RunAcceptedEvent = EVENT_CLASSES["run.accepted"]
TelemetryEvent = EVENT_CLASSES["telemetry"]
ResyncEvent = EVENT_CLASSES["resync"]
ProposalCreatedEvent = EVENT_CLASSES["proposal.created"]


def _tag(value: Any) -> str:
    t = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return t if isinstance(t, str) and t in EVENT_CLASSES else "__unknown__"


_choices: list[Any] = [Annotated[cls, Tag(t)] for t, cls in EVENT_CLASSES.items()]
_choices.append(Annotated[UnknownEvent, Tag("__unknown__")])
_union: Any = _choices[0]
for _c in _choices[1:]:
    _union = _union | _c
AnyEvent = Annotated[_union, Discriminator(_tag)]
"""Discriminated union of every typed event, keyed by `type`, with `UnknownEvent` fallback."""


@cache
def event_adapter() -> TypeAdapter[EventBase]:
    """The adapter of `AnyEvent`, built on first use and kept.

    Not built at import: a command that never parses an event (`ito-tui runs`)
    should not pay for it (issue 8, #2b).
    """
    return TypeAdapter(AnyEvent)


class EventParseError(ValueError):
    """A stream message that is not a valid event envelope (names the field at fault)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _first_error(exc: ValidationError) -> EventParseError:
    err = exc.errors(include_url=False, include_input=False)[0]
    loc = [str(p) for p in err.get("loc", ())]
    # The first location element is the union tag (an event type); drop it.
    if loc and (loc[0] in EVENT_CLASSES or loc[0].startswith("__")):
        loc = loc[1:]
    field = ".".join(loc) or None
    return EventParseError(f"invalid event: {field or 'body'}: {err.get('msg', 'invalid')}", field)


def parse_event(raw: str | bytes | dict[str, Any]) -> EventBase:
    """Parse one event envelope; unknown types yield `UnknownEvent`.

    Raises `EventParseError` (and nothing else) when the body is not JSON or not
    an envelope, or when a known type's payload does not match the contract.
    """
    try:
        if isinstance(raw, dict):
            return event_adapter().validate_python(raw)
        return event_adapter().validate_json(raw)
    except ValidationError as exc:
        raise _first_error(exc) from None
    except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
        # ArithmeticError: an overflow in a validator is a bad event, never a traceback.
        raise EventParseError(f"invalid event: {type(exc).__name__}") from None


def event_to_json(event: EventBase) -> str:
    """Serialise an event envelope as the wire JSON (used by servers and `watch --json`)."""
    return event.model_dump_json(exclude_none=False)


def make_event(
    type_: str,
    *,
    seq: int,
    run_id: str,
    ts: Any,
    data: BaseModel | JsonObject,
    sim_ts: Any = None,
    stage: str | None = None,
) -> EventBase:
    """Build a typed event (servers and tests); unknown types become `UnknownEvent`."""
    payload = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
    raw = {
        "seq": seq,
        "run_id": run_id,
        "type": type_,
        "ts": ts,
        "sim_ts": sim_ts,
        "stage": stage,
        "data": payload,
    }
    return parse_event(raw)
