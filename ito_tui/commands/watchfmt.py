"""Lines printed by `watch`: one per event (human) or one JSON object per event.

Human mode throttles the chatty types (telemetry, stage.progress) to one line
every few seconds so a fast run stays readable; JSON mode prints every event.
Connection changes (reconnecting, resynced) go to stderr in both modes, so
stdout stays a clean stream.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .output import Output, money, safe

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState
    from ito_tui.contract import EventBase
    from ito_tui.state import RunState

THROTTLED = {"telemetry": 5.0, "stage.progress": 5.0}
"""Event type -> minimum wall seconds between two human lines of that type."""

_SEVERITY_STYLE = {
    "gates": ("bold",),
    "faults": ("yellow",),
    "proposals": ("magenta", "bold"),
    "budget": ("yellow",),
}


def describe(event: EventBase) -> str:
    """A one-line, terminal-safe description of an event."""
    data: Any = getattr(event, "data", None)
    t = event.type

    def get(key: str) -> Any:
        if isinstance(data, dict):
            return data.get(key)
        return getattr(data, key, None)

    if t == "telemetry":
        mfu = get("mfu_frac")
        return (
            f"step {get('step'):,}  loss {get('loss'):.4f}  "
            f"{get('tokens_per_s_per_gpu'):,.0f} tok/s/GPU"
            + (f"  MFU {100 * mfu:.0f}%" if mfu is not None else "")
            + f"  spent {money(get('spend_usd'))}"
        )
    if t == "stage.progress":
        p = get("progress")
        return f"{safe(get('stage'))} {100 * p.frac:.0f}% (step {p.step:,}/{p.total_steps:,})"
    if t == "run.state_changed":
        reason = get("reason")
        return f"{safe(get('from_state'))} → {safe(get('to_state'))}" + (
            f" ({safe(reason)})" if reason else ""
        )
    if t in {"stage.started", "stage.completed"}:
        return safe(get("stage"))
    if t in {"stage.skipped", "stage.failed"}:
        return f"{safe(get('stage'))}: {safe(get('reason'))}"
    if t in {"gate.started", "gate.passed", "gate.failed"}:
        gate = get("gate")
        text = f"{safe(gate.stage)} gate {safe(gate.status)}"
        failing = gate.failing
        if failing:
            text += ": " + ", ".join(
                f"{safe(r.benchmark)} {r.value:.3g} {safe(r.comparator)} {r.threshold:.3g}"
                for r in failing
            )
        return text
    if t == "gate.result":
        r = get("result")
        mark = "pass" if r.passed else "FAIL"
        return (
            f"{safe(r.benchmark)} {safe(r.metric)} {r.value:.3g} "
            f"{safe(r.comparator)} {r.threshold:.3g}: {mark}"
        )
    if t.startswith("proposal."):
        p = get("proposal")
        return f"{safe(p.proposal_id)} {safe(p.kind)} {safe(p.status)}: {safe(p.trigger.reason)}"
    if t == "checkpoint.saved":
        c = get("checkpoint")
        return f"step {c.step:,} ({c.size_gb:.0f} GB, blocking {c.blocking_s:.1f}s)"
    if t == "fault.detected":
        node = safe(get("node"))
        return f"{safe(get('kind'))} on {node}, detected after {get('detected_after_s'):.0f}s"
    if t == "fault.recovered":
        return (
            f"{safe(get('kind'))}: resumed after {get('resumed_after_s'):.0f}s, "
            f"{get('lost_steps'):,} steps lost"
        )
    if t == "slo.breached":
        return f"{safe(get('slo'))} SLO: {get('value_s'):.0f}s > {get('limit_s'):.0f}s"
    if t == "loss.spike_detected":
        action = safe(get("action"))
        return f"step {get('step'):,} loss {get('loss'):.4f} z {get('loss_z'):.1f}: {action}"
    if t == "budget.warning":
        return f"{money(get('usd_spent'))} of {money(get('budget_usd'))} spent"
    if t in {"run.completed", "run.failed", "run.cancelled"}:
        failure = get("failure")
        detail = get("detail") or (failure.detail if failure is not None else "")
        return safe(detail)
    if t == "plan.selected":
        p = get("plan")
        return f"world {p.world_size}, tp {p.tp}, pp {p.pp}, {safe(p.precision)}"
    if t in {"plan.warning"}:
        return f"{safe(get('code'))}: {safe(get('message'))}"
    if t == "resync":
        return "state re-seeded from a snapshot (older events expired)"
    if t == "run.accepted":
        return f"booking {safe(get('booking_id'))}"
    return _raw(data)


def _raw(data: object) -> str:
    import json

    try:
        dumped = data.model_dump(mode="json") if hasattr(data, "model_dump") else data
        text = json.dumps(dumped, ensure_ascii=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(data)
    return safe(text[:300])


class WatchPrinter:
    """Prints events of one run as human lines or JSON lines."""

    def __init__(self, out: Output, *, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self._last: dict[str, float] = {}

    def event(self, event: EventBase, state: RunState) -> None:
        if self.as_json:
            self.out.json_line(event.model_dump(mode="json"))
            return
        limit = THROTTLED.get(event.type)
        if limit is not None:
            now = time.monotonic()
            if now - self._last.get(event.type, -limit) < limit:
                return
            self._last[event.type] = now
        try:
            text = describe(event)
        except (AttributeError, TypeError, ValueError, KeyError):
            text = _raw(getattr(event, "data", None))
        kind = getattr(event, "kind", "other")
        if event.type == "gate.failed" or event.type == "run.failed":
            styles: tuple[str, ...] = ("red", "bold")
        elif event.type in {"gate.passed", "run.completed"}:
            styles = ("green",)
        else:
            styles = _SEVERITY_STYLE.get(kind, ())
        stamp = f"{event.ts:%H:%M:%S}"
        label = self.out.style(f"{safe(event.type):<24}", *styles)
        self.out.line(f"{stamp} {event.seq:>6} {label} {text}")

    def connection(self, state: ConnectionState) -> None:
        """Report reconnects on stderr (never on stdout, which may be a JSON stream)."""
        status = state.status
        if status == "reconnecting":
            wait = f" in {state.retry_in_s:.0f}s" if state.retry_in_s is not None else ""
            why = f" ({safe(state.error)})" if state.error else ""
            self.out.info(f"connection lost{why}; reconnecting{wait} (attempt {state.attempt})")
        elif status == "resynced":
            self.out.info("resynced from a snapshot (older events expired on the server)")
