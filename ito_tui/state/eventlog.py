"""`EventLog`: a bounded, filterable list of one-line human summaries of a run's events.

Every text passes through `textsafe.one_line`, so a backend string can never
act on the terminal; an event type this client does not know is shown with its
raw JSON body. High-rate types (`telemetry`, `stage.progress`) are left out by
default: they live in the charts, and would push real news out of the log.

A line says what happened first and the backend's id last, in parentheses
(`checkpoint at step 86,026: 2 GB, blocked 4.9 s (ckpt_…_0046)`): a list cut to its
width keeps what an operator scans for, as the inspector's marks read.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from ito_tui.contract import EventBase, UnknownEvent
from ito_tui.describe import gate_result_text, proposal_words
from ito_tui.format import (
    MISSING,
    count,
    fixed,
    integer,
    percent,
    stage_label,
    status_label,
    usd,
    when,
)
from ito_tui.textsafe import one_line

from .fleet_events import NODE_EVENT_STATE, node_words

__all__ = ["NOISY_TYPES", "SEVERITIES", "EventLog", "LogEntry", "describe", "severity_of"]

SEVERITIES = ("info", "warn", "error", "action")
"""Severities: `action` means a person is asked to decide something."""
NOISY_TYPES = frozenset({"telemetry", "stage.progress"})
MAX_TEXT = 240


class LogEntry(NamedTuple):
    """One event-log line."""

    seq: int
    at: datetime
    """When it happened on the run's clock (`EventBase.at`: `sim_ts` in a demo, else `ts`)."""
    type: str
    kind: str
    severity: str
    text: str
    event: EventBase | None = None
    """The event the line summarises (its data fields for a view of the line in full)."""


_SEVERITY = {
    "run.failed": "error",
    "stage.failed": "error",
    "gate.failed": "error",
    "checkpoint.failed": "error",
    "fault.detected": "error",
    "slo.breached": "error",
    "run.cancelled": "warn",
    "budget.warning": "warn",
    "plan.warning": "warn",
    "resync": "warn",
    "proposal.expired": "warn",
    "proposal.created": "action",
    "node.failed": "error",
    "node.degraded": "warn",
    "straggler.detected": "warn",
}


def severity_of(event: EventBase) -> str:
    """info | warn | error | action for `event`."""
    data: Any = getattr(event, "data", None)
    if event.type == "loss.spike_detected":
        return "action" if str(getattr(data, "action", "")) == "escalated" else "warn"
    if event.type == "quorum.changed":
        # A quorum below its minimum cannot train: that is news, not bookkeeping.
        least = getattr(data, "min_replicas", None)
        participants = getattr(data, "participants", None)
        if least is not None and participants is not None and participants < least:
            return "error"
    return _SEVERITY.get(event.type, "info")


def _num(value: Any, digits: int) -> str:
    """A measured number with `digits` decimals; `—` when the backend sent none."""
    return MISSING if value is None else fixed(value, digits)


def _steps(p: Any) -> str:
    step = integer(p.step)
    return f"step {step}/{integer(p.total_steps)}" if p.total_steps else f"step {step}"


def _proposal(d: Any) -> str:
    p = d.proposal
    text = f"proposal ({proposal_words(p.kind).short}) {p.status}"
    if p.decided_by:
        text += f" by {p.decided_by}"
    if str(p.status) == "pending":
        text += f": {p.trigger.reason}"
        if p.action.rollback_to_step is not None:
            text += f"; roll back to step {integer(p.action.rollback_to_step)}"
        if p.action.skip_batches:
            text += f", skip {integer(p.action.skip_batches)} batches"
        # The date too when the deadline is on another day than the ask.
        text += f" — needs a decision before {when(p.expires_at, p.created_at)}"
    elif p.comment:
        text += f" — {p.comment}"
    return f"{text} ({p.proposal_id})"


def _gate(d: Any, verb: str) -> str:
    g = d.gate
    text = f"gate {stage_label(g.stage)} {verb}"
    failing = g.failing
    if verb == "failed" and failing:
        text += ": " + ", ".join(gate_result_text(r) for r in failing)
    elif g.results:
        text += f": {sum(r.passed for r in g.results)}/{len(g.results)} benchmarks pass"
    return f"{text} ({g.gate_id})"


def _ended(d: Any, verb: str) -> str:
    text = f"run {verb}"
    if d.failure is not None:
        text += f" ({d.failure.kind})"
    if d.detail:
        text += f": {d.detail}"
    if d.spend is not None:
        text += f" — spent {usd(d.spend.usd_spent)} of {usd(d.spend.budget_usd)}"
    return text


def _fault_recovered(d: Any) -> str:
    text = f"fault {d.kind} recovered after {fixed(d.resumed_after_s / 60, 1)} min"
    if d.resumed_from_step is not None:
        text += f", resumed from step {integer(d.resumed_from_step)}"
    if d.lost_steps:
        text += f", {integer(d.lost_steps)} steps lost"
    return f"{text} ({d.fault_id})"


def _quorum(d: Any) -> str:
    noun = "replica" if d.participants == 1 else "replicas"
    text = f"quorum {integer(d.quorum_id)}: {integer(d.participants)} {noun}"
    if d.min_replicas is not None:
        text += f" (min {integer(d.min_replicas)})"
        if d.participants < d.min_replicas:
            text += " — below minimum, training stalls"
    return text


_FORMAT: dict[str, Callable[[Any], str]] = {
    "run.accepted": lambda d: f"run accepted on booking {d.booking_id}",
    "run.state_changed": lambda d: (
        f"run {status_label(d.from_state or '?')} → {status_label(d.to_state)}"
        + (f": {d.reason}" if d.reason else "")
    ),
    "stage.started": lambda d: (
        f"{stage_label(d.stage)} started"
        + (f" ({integer(d.total_steps)} steps)" if d.total_steps else "")
    ),
    "stage.progress": lambda d: (
        f"{stage_label(d.stage)} {_steps(d.progress)} ({percent(d.progress.frac)})"
    ),
    "stage.completed": lambda d: f"{stage_label(d.stage)} completed",
    "stage.skipped": lambda d: (
        f"{stage_label(d.stage)} skipped" + (f": {d.reason}" if d.reason else "")
    ),
    "stage.failed": lambda d: (
        f"{stage_label(d.stage)} failed" + (f": {d.reason}" if d.reason else "")
    ),
    "data.manifest_ready": lambda d: (
        f"manifest ready: {integer(d.documents)} documents, {count(d.tokens)} tokens, "
        f"{integer(d.shards)} shards"
    ),
    "data.dedup_completed": lambda d: (
        f"dedup ({d.method}): {integer(d.documents_before)} → {integer(d.documents_after)} "
        f"documents ({percent(d.removed_frac, 1)} removed)"
    ),
    "data.decontam_completed": lambda d: (
        f"decontamination removed {integer(d.removed_documents)} documents"
        + (
            " (" + ", ".join(f"{k} {v}" for k, v in sorted(d.per_benchmark.items())) + ")"
            if d.per_benchmark
            else ""
        )
    ),
    "ladder.completed": lambda d: (
        f"{d.ladder_model} ladder: {d.decision}" + (f" — {d.detail}" if d.detail else "")
    ),
    "plan.selected": lambda d: (
        f"plan: {d.plan.world_size} GPUs, dp {d.plan.dp_replicate}×{d.plan.dp_shard} "
        f"tp {d.plan.tp} pp {d.plan.pp} cp {d.plan.cp}, {d.plan.precision}, "
        f"{fixed(d.plan.est_mem_per_gpu_gib, 0)}/{fixed(d.plan.hbm_per_gpu_gib, 0)} GiB per GPU"
    ),
    "plan.warning": lambda d: f"plan warning {d.code}: {d.message}",
    "checkpoint.saved": lambda d: (
        f"checkpoint at step {integer(d.checkpoint.step)}: "
        f"{fixed(d.checkpoint.size_gb, 0)} GB, blocked {fixed(d.checkpoint.blocking_s, 1)} s "
        f"({d.checkpoint.checkpoint_id})"
    ),
    "checkpoint.failed": lambda d: f"checkpoint at step {integer(d.step)} failed: {d.reason}",
    "fault.detected": lambda d: (
        f"fault {d.kind}"
        + (f" on {d.node}" if d.node else "")
        + (f" at step {integer(d.step)}" if d.step is not None else "")
        + f", detected after {fixed(d.detected_after_s / 60, 1)} min ({d.fault_id})"
    ),
    "fault.recovered": _fault_recovered,
    "slo.breached": lambda d: (
        f"SLO breached: {d.slo} took {fixed(d.value_s / 60, 1)} min "
        f"(limit {fixed(d.limit_s / 60, 0)} min)" + (f", fault {d.fault_id}" if d.fault_id else "")
    ),
    "loss.spike_detected": lambda d: (
        f"loss spike at step {integer(d.step)}: loss {fixed(d.loss, 3)} (z {fixed(d.loss_z, 1)}) — "
        + ("batches skipped" if str(d.action) == "skipped" else f"{d.action}: needs a person")
    ),
    "proposal.created": _proposal,
    "proposal.approved": _proposal,
    "proposal.rejected": _proposal,
    "proposal.expired": _proposal,
    "proposal.executed": _proposal,
    "gate.started": lambda d: f"gate {stage_label(d.gate.stage)} started ({d.gate.gate_id})",
    "gate.result": lambda d: (
        f"gate result: {gate_result_text(d.result, verdict=True)} ({d.gate_id})"
    ),
    "gate.passed": lambda d: _gate(d, "passed"),
    "gate.failed": lambda d: _gate(d, "failed"),
    "telemetry": lambda d: f"{stage_label(d.stage)} {_steps(d)} loss {_num(d.loss, 3)}",
    "budget.warning": lambda d: (
        f"budget {percent(d.threshold_frac)} used: {usd(d.usd_spent)} of {usd(d.budget_usd)}"
    ),
    "run.completed": lambda d: _ended(d, "completed"),
    "run.failed": lambda d: _ended(d, "failed"),
    "run.cancelled": lambda d: _ended(d, "cancelled"),
    "quorum.changed": _quorum,
    "resync": lambda d: (
        f"resynced from snapshot: run {status_label(d.state)}, {stage_label(d.current_stage)}"
    ),
}
# Node and straggler events in the words the timeline uses too (`fleet_events.node_words`).
_FORMAT.update(
    (kind, partial(node_words, kind))
    for kind in (*NODE_EVENT_STATE, "straggler.detected", "straggler.cleared")
)


def describe(event: EventBase) -> str:
    """A one-line, terminal-safe summary of `event` (raw JSON for unknown types)."""
    fmt = _FORMAT.get(event.type)
    data = getattr(event, "data", None)
    if fmt is None or data is None or isinstance(event, UnknownEvent):
        body = json.dumps(data, default=str, sort_keys=True, ensure_ascii=False)
        return one_line(f"{event.type} {body}", MAX_TEXT)
    try:
        text = fmt(data)
    except (AttributeError, TypeError, ValueError, KeyError, ArithmeticError):
        # A payload that parses but misses what the summary wants: show it raw, never crash.
        text = f"{event.type} {data!r}"
    return one_line(text, MAX_TEXT)


class EventLog:
    """The newest `capacity` events of a run as `LogEntry` lines, filterable."""

    def __init__(self, capacity: int = 2000, *, include: Iterable[str] = ()) -> None:
        self.capacity = capacity
        self._entries: deque[LogEntry] = deque(maxlen=capacity)
        self._skip = NOISY_TYPES - set(include)
        self.appended = 0
        """Entries ever appended (a cheap change counter for redraws)."""

    def append(self, event: EventBase) -> LogEntry | None:
        """Log `event`; None when its type is left out (telemetry, progress)."""
        if event.type in self._skip:
            return None
        kind = "other" if isinstance(event, UnknownEvent) else type(event).kind
        entry = LogEntry(
            event.seq,
            event.at,
            one_line(event.type, 64),
            kind,
            severity_of(event),
            describe(event),
            event,
        )
        self._entries.append(entry)
        self.appended += 1
        return entry

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[LogEntry]:
        return iter(self._entries)

    @property
    def entries(self) -> tuple[LogEntry, ...]:
        return tuple(self._entries)

    def filter(
        self,
        kind: str | Iterable[str] | None = None,
        severity: str | Iterable[str] | None = None,
        query: str | None = None,
    ) -> list[LogEntry]:
        """Entries matching every given criterion, oldest first.

        `kind` / `severity` take one name or several; `query` is a case-insensitive
        substring of the text or the type.
        """
        kinds = {kind} if isinstance(kind, str) else None if kind is None else set(kind)
        sevs = (
            {severity} if isinstance(severity, str) else None if severity is None else set(severity)
        )
        q = query.casefold() if query else None
        return [
            e
            for e in self._entries
            if (kinds is None or e.kind in kinds)
            and (sevs is None or e.severity in sevs)
            and (q is None or q in e.text.casefold() or q in e.type.casefold())
        ]
