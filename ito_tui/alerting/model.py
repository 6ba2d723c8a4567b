"""What an alert is, and which events raise one: the pure mapping every channel shares.

`alert_for(event, state)` turns one run event into an `Alert` (or None). Its `title` and
`summary` are our words; every backend string in the summary goes through
`textsafe.one_line`, so a run id or a benchmark name can never carry a terminal escape
or a token into a toast, a notification or a hook's stdin. The TUI, `watch
--alert-command` and the `RunsWatcher` call it, so they raise the same alerts by
construction.

Headless and light: no textual, no httpx, and no pydantic at import (the event models
are only type-checked here), so the settings and the first frame can import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, get_args

from ito_tui.describe import KIND_TITLES as KIND_HEADINGS
from ito_tui.format import duration, fixed, percent, stage_label, usd, when
from ito_tui.redaction import redact_secrets
from ito_tui.textsafe import one_line

if TYPE_CHECKING:
    from ito_tui.contract import EventBase
    from ito_tui.state import Projection, RunState

__all__ = [
    "ALERT_KINDS",
    "CHANNELS",
    "FLEET_ALERTS",
    "KIND_TITLES",
    "Alert",
    "AlertKind",
    "Channel",
    "ProjectionCrossing",
    "Severity",
    "alert_for",
    "projection_alert",
    "rfc3339",
]

AlertKind = Literal[
    "proposal",
    "gate_failed",
    "budget",
    "slo",
    "node_failed",
    "straggler",
    "silent",
    "projection",
    "run_end",
    "proposal_missed",
]
ALERT_KINDS: tuple[str, ...] = get_args(AlertKind)
"""Every kind, in the order the settings and the docs list them."""
FLEET_ALERTS: tuple[str, ...] = ("node_failed", "straggler")
"""The kinds about one node, which the run's Nodes tab shows as a marked row."""

Channel = Literal["bell", "toast", "title", "desktop", "command"]
CHANNELS: tuple[str, ...] = get_args(Channel)
"""Where an alert can go; `[alerts.kinds]` picks a subset per kind."""

Severity = Literal["information", "warning", "error"]

KIND_TITLES: dict[str, str] = {
    "proposal": "Needs approval",
    "gate_failed": "Gate failed",
    "budget": "Budget warning",
    "slo": "SLO breached",
    "node_failed": "Node failed",
    "straggler": "Straggler",
    "silent": "Run silent",
    "projection": "Will not make it",
    "run_end": "Run ended",
    "proposal_missed": "Proposal missed",
}
"""A short name of each kind in our words (desktop notifications, summaries)."""


def _now() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """`2026-11-29T20:00:00.000Z`: UTC, millisecond precision, as the wire writes it."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _json_text(value: str) -> str:
    """`value` safe for any JSON reader: no registered secret, no lone surrogate (which
    `json.dumps` would write as an escape that strict UTF-8 readers reject)."""
    return redact_secrets(value).encode("utf-8", "replace").decode("utf-8")


@dataclass(frozen=True)
class Alert:
    """Something an operator away from the pane should notice."""

    kind: AlertKind
    run_id: str
    title: str
    """Our words, short (a toast's title)."""
    summary: str
    """One line, our words around backend strings made safe by `textsafe.one_line`."""
    severity: Severity = "warning"
    stage: str | None = None
    at: datetime = field(default_factory=_now)
    """When it happened (the event's `ts`), UTC."""
    seq: int | None = None
    """The event's seq; None for alerts no single event raised (a missed proposal)."""
    proposal_id: str | None = None
    expires_at: datetime | None = None
    """A pending proposal's expiry."""
    url: str | None = None

    def key(self) -> str:
        """Dedupe key: one alert per run, event seq and kind (per proposal without a seq)."""
        if self.seq is None and self.proposal_id is not None:
            return f"{self.run_id}|{self.proposal_id}|{self.kind}"
        return f"{self.run_id}|{self.seq}|{self.kind}"

    def to_json(self) -> dict[str, Any]:
        """The alert as a JSON object (a hook's stdin): None fields are left out.

        Only strings and ints, so `json.dumps(..., allow_nan=False)` never fails; every
        string is redacted and free of lone surrogates (RFC 8259 safe).
        """
        out: dict[str, Any] = {
            "kind": self.kind,
            "run_id": _json_text(self.run_id),
            "stage": None if self.stage is None else _json_text(self.stage),
            "severity": self.severity,
            "summary": _json_text(self.summary),
            "at": rfc3339(self.at),
            "seq": self.seq,
            "proposal_id": None if self.proposal_id is None else _json_text(self.proposal_id),
            "expires_at": None if self.expires_at is None else rfc3339(self.expires_at),
            "url": None if self.url is None else _json_text(self.url),
        }
        return {k: v for k, v in out.items() if v is not None}


def alert_for(event: EventBase, state: RunState) -> Alert | None:
    """The alert an event raises, if any (pure: the caller decides when to call it).

    `state` is the run's state after the event (the run-end wording reads its outcome).
    """
    data: Any = getattr(event, "data", None)
    run = one_line(state.run_id)
    stage = None if event.stage is None else str(event.stage)
    if stage is None and state.current_stage is not None:
        stage = state.current_stage
    common: dict[str, Any] = {"stage": stage, "at": event.ts, "seq": event.seq}
    if event.type == "proposal.created" and data is not None:
        p = data.proposal
        return Alert(
            "proposal",
            state.run_id,
            "Needs approval",
            f"{run}: {_proposed(str(p.kind))}; "
            + ("the run is paused until someone decides." if p.run_paused else "the run goes on."),
            proposal_id=p.proposal_id,
            expires_at=p.expires_at,
            **common,
        )
    if event.type == "gate.failed" and data is not None:
        gate = data.gate
        failing = ", ".join(one_line(r.benchmark) for r in gate.failing) or "a benchmark"
        return Alert(
            "gate_failed",
            state.run_id,
            "Gate failed",
            f"{run}: {stage_label(gate.stage)} gate failed ({failing}); the run was stopped.",
            "error",
            **{**common, "stage": str(gate.stage)},
        )
    if event.type == "budget.warning" and data is not None:
        return Alert(
            "budget",
            state.run_id,
            "Budget warning",
            f"{run}: {usd(data.usd_spent)} of {usd(data.budget_usd)} spent "
            f"(≥ {percent(data.threshold_frac)}).",
            **common,
        )
    if event.type == "slo.breached" and data is not None:
        limit = (
            f"detect < {duration(600)}"
            if str(data.slo) == "detect"
            else f"resume < {duration(900)}"
        )
        return Alert(
            "slo",
            state.run_id,
            "SLO breached",
            f"{run}: fault {one_line(str(data.slo))} took {duration(data.value_s)} ({limit}).",
            **common,
        )
    node = _node_failed(event, data, state)
    if node is not None:
        return Alert(
            "node_failed",
            state.run_id,
            "Node failed",
            f"{run}: node {node} failed; the backend is recovering.",
            "error",
            **common,
        )
    if event.type == "straggler.detected":
        host = _field(data, "hostname") or "a node"
        step, p50 = _number(data, "step_time_s"), _number(data, "fleet_p50_s")
        pace = f" (step {fixed(step, 2)} s vs fleet {fixed(p50, 2)} s)" if step and p50 else ""
        return Alert(
            "straggler",
            state.run_id,
            "Straggler",
            f"{run}: {host} is slower than the rest of the fleet{pace}.",
            **common,
        )
    if event.terminal:
        outcome = state.outcome or event.type.removeprefix("run.")
        severity: Severity = "information" if outcome == "completed" else "error"
        return Alert(
            "run_end",
            state.run_id,
            f"Run {outcome}",
            f"{run} ended: {outcome}.",
            severity,
            **common,
        )
    return None


def _node_failed(event: EventBase, data: Any, state: RunState) -> str | None:
    """The node of a node failure (`fault.detected` of a node, API v1.1 `node.failed`).

    A v1.1 backend says `node.failed` and then `fault.detected` for the same failure: the
    fault of a node the stream already reported failed (same fault id, or the same node
    still failed) raises no second alert."""
    if event.type == "fault.detected" and data is not None:
        if str(data.kind) != "node_failure" and data.node is None:
            return None  # a hang or another fault: not a node's failure
        if _already_failed(state, data.fault_id, data.node):
            return None
        return one_line(str(data.node)) if data.node is not None else "a node"
    if event.type == "node.failed":
        host = _field(data, "hostname") or "a node"
        replica = _field(data, "replica_id")
        return f"{host} (replica {replica})" if replica else host
    return None


def _already_failed(state: RunState, fault_id: str, node: str | None) -> bool:
    node_events = getattr(state, "node_events", ())
    for incident in reversed(node_events[-32:]):
        if incident.type == "node.failed" and (
            incident.fault_id == fault_id or (node is not None and incident.hostname == node)
        ):
            return node is None or state.node_states.get(node) != "healthy"
    return False


def _number(data: Any, name: str) -> float | None:
    value = data.get(name) if isinstance(data, dict) else getattr(data, name, None)
    return value if isinstance(value, float | int) and math.isfinite(value) else None


def _field(data: Any, name: str) -> str | None:
    """A string field of an event this client has no model for (kept raw as a dict)."""
    value = data.get(name) if isinstance(data, dict) else getattr(data, name, None)
    return one_line(str(value), max_len=80) if isinstance(value, str) and value else None


def _proposed(kind: str) -> str:
    """`the backend proposes to roll back and skip batches`, in the words of the proposal
    modal's heading (describe.KIND_TITLES); an unknown kind as the backend spells it."""
    title = KIND_HEADINGS.get(kind)
    if title is None:
        return f"{one_line(kind)} proposed"
    return f"the backend proposes to {title[0].lower()}{title[1:]}"


# ---------------------------------------------------------------- projection crossings

REARM_FRAC = 0.02
"""A p90 must come back this fraction of the remaining time (or of the budget) inside
the line before a new crossing alerts again: a p90 hovering at the line alerts once."""
_REARM = Decimal(str(REARM_FRAC))


def projection_alert(
    state: RunState, proj: Projection, *, late: bool, over: bool, at: datetime | None = None
) -> Alert:
    """The alert of a projection whose p90 crossed the booking's end (`late`) and/or the
    budget (`over`)."""
    run = one_line(state.run_id)
    now = at or _now()
    parts = []
    if late:
        f90 = "not in sight" if proj.finish_p90 is None else when(proj.finish_p90, now)
        ends = when(proj.booking_ends_at, now)
        parts.append(f"p90 finish {f90}, after the booking ends ({ends})")
    if over:
        parts.append(f"p90 spend {usd(proj.spend_p90)}, over the budget of {usd(proj.budget_usd)}")
    title = (
        "Late and over budget"
        if late and over
        else "Will finish late"
        if late
        else ("Will go over budget")
    )
    return Alert(
        "projection",
        state.run_id,
        title,
        f"{run}: at the measured pace, " + "; ".join(parts) + ".",
        stage=state.current_stage,
        at=now,
        seq=state.last_seq,
    )


class ProjectionCrossing:
    """Raises a projection alert once per crossing of the booking's end or the budget by
    the p90 (`check` after each projection; one per run)."""

    def __init__(self) -> None:
        self.late = False
        self.over = False

    def check(
        self, state: RunState, proj: Projection, *, at: datetime | None = None
    ) -> Alert | None:
        """The alert when `proj` newly crosses a line; None otherwise. A projection not
        made (measuring, ended) or not yet settled (`settled`) changes nothing."""
        if not proj.known or not settled(proj):
            return None
        new_late = proj.late and not self.late
        new_over = proj.over and not self.over
        if proj.late:
            self.late = True
        elif self.late and _back_inside_end(proj):
            self.late = False
        if proj.over:
            self.over = True
        elif self.over and _back_inside_budget(proj):
            self.over = False
        if not (new_late or new_over):
            return None
        return projection_alert(state, proj, late=new_late, over=new_over, at=at)


SETTLE_FRAC = 0.05
"""A projection alerts once it was measured over this share of what it projects..."""
SETTLE_S = 6 * 3600.0
"""... or over this many seconds of the run's clock, whichever is shorter. Measured on a
few samples the p90 swings across the booking's end and back (the showcase's first toast
said 'p90 Dec 16' while the stage list, a second later, said 'p90 Dec 9'); the header's
badge follows the projection from the start, the alert waits for a pace worth waking
someone for."""


def settled(proj: Projection) -> bool:
    """Whether `proj` was measured long enough to alert on (`SETTLE_FRAC`, `SETTLE_S`)."""
    remaining = proj.remaining_s_p50
    need = SETTLE_S if remaining is None else min(SETTLE_S, SETTLE_FRAC * remaining)
    return proj.measured_s >= need


def _back_inside_end(proj: Projection) -> bool:
    end, f90, r90 = proj.booking_ends_at, proj.finish_p90, proj.remaining_s_p90
    if end is None:
        return True
    if f90 is None or r90 is None:
        return False
    return (end - f90).total_seconds() >= REARM_FRAC * r90


def _back_inside_budget(proj: Projection) -> bool:
    budget, s90 = proj.budget_usd, proj.spend_p90
    if budget is None:
        return True
    return s90 is not None and s90 <= budget * (1 - _REARM)
