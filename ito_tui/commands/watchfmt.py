"""Lines printed by `watch`: one per event (human) or one JSON object per event.

Human lines use the shared event-log summaries (`ito_tui.state.describe`, the
same text the TUI's log shows, already terminal-safe) and throttle the chatty
types (telemetry, stage.progress) to one line every few seconds so a fast run
stays readable; JSON mode prints every event. A line starts with its UTC time of
day; a line of another day than the one before it (today, before the first) comes
after a `── 2026-11-30 (UTC) ──` line, so a watch left running overnight, or replaying
yesterday's events, never shows a time without its date. Connection changes go to
stderr in both modes, so stdout stays a clean stream; a flapping connection gets one
line, then summaries with a count (`Flaps`), never a line per reconnect.
Numbers follow `ito_tui.format`: a diverged loss prints `NaN` or `∞`, and JSON
lines carry `"NaN"` / `"Infinity"`. A failed gate adds one line per failing benchmark:
its value, the comparator and threshold it missed, and by how much (in JSON mode the
`gate.result` and `gate.failed` events carry the same, as on the stream).
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from ito_tui.format import MISSING, fixed, general, integer, percent, stage_label, usd

from .output import Output, safe

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState
    from ito_tui.contract import EventBase, Gate, GateResult

THROTTLED = {"telemetry": 5.0, "stage.progress": 5.0}
"""Event type -> minimum wall seconds between two human lines of that type."""

_STYLE = {
    "error": ("red", "bold"),
    "warn": ("yellow",),
    "action": ("magenta", "bold"),
}
_GOOD = {"gate.passed", "run.completed", "stage.completed", "fault.recovered"}


def telemetry_text(event: EventBase) -> str:
    """One telemetry sample as `stage step loss tok/s MFU goodput spend`."""
    from ito_tui.contract import TelemetrySample

    s = getattr(event, "data", None)
    if not isinstance(s, TelemetrySample):
        from ito_tui.state import describe

        return describe(event)
    mfu = f"  MFU {percent(s.mfu_frac)}" if s.mfu_frac is not None else ""
    tps = s.tokens_per_s_per_gpu
    goodput = s.goodput.ml_productivity_frac
    return (
        f"{stage_label(s.stage)} step {integer(s.step)}  loss {_or_dash(s.loss, 3)}  "
        f"{MISSING if tps is None else fixed(tps, 0, grouping=True)} tok/s/GPU{mfu}  "
        f"goodput {percent(goodput)}  spent {usd(s.spend_usd)}"
    )


def _or_dash(value: float | None, digits: int) -> str:
    return MISSING if value is None else fixed(value, digits)


_SHORT = {">=": "short by", ">": "short by", "<=": "over by", "<": "over by"}


def failing_text(r: GateResult) -> str:
    """One failing benchmark: `mmlu acc 0.6123, needs >= 0.65: short by 0.0377 (absolute)`."""
    comparator = str(r.comparator)
    gap = general(abs(r.value - r.threshold), 3)
    ref = "" if r.reference_value is None else f", reference {general(r.reference_value, 4)}"
    return (
        f"{safe(r.benchmark)} {safe(r.metric)} {general(r.value, 4)}, needs {safe(comparator)} "
        f"{general(r.threshold, 4)}: {_SHORT.get(comparator, 'off by')} {gap} "
        f"({safe(r.rule)}{ref})"
    )


class WatchPrinter:
    """Prints events of one run as human lines or JSON lines."""

    def __init__(self, out: Output, *, as_json: bool, today: date | None = None) -> None:
        self.out = out
        self.as_json = as_json
        self._last: dict[str, float] = {}
        from ito_tui.client.connection import Flaps

        self._flaps = Flaps()
        self._reconnects = 0
        self._note: str | None = None
        self._gates_told: set[str] = set()
        self._day = today or datetime.now(UTC).date()
        """The UTC day of the last line printed (today before the first): each line says
        only its time, so a line of another day is preceded by that day's date."""

    def event(self, event: EventBase) -> None:
        """Print one event (human lines of chatty types are throttled)."""
        if self.as_json:
            self.out.json_line(event.model_dump(mode="json"))
            return
        limit = THROTTLED.get(event.type)
        if limit is not None:
            now = time.monotonic()
            if now - self._last.get(event.type, -limit) < limit:
                return
            self._last[event.type] = now
        from ito_tui.state import describe, severity_of

        styles = ("green",) if event.type in _GOOD else _STYLE.get(severity_of(event), ())
        label = self.out.style(f"{safe(event.type):<24}", *styles)
        text = telemetry_text(event) if event.type == "telemetry" else describe(event)
        at = event.at.astimezone(UTC)  # the run's clock, as the TUI shows it
        if at.date() != self._day:
            self._day = at.date()
            self.out.line(self.out.style(f"── {at:%Y-%m-%d} (UTC) ──", "dim"))
        self.out.line(f"{at:%H:%M:%S} {event.seq:>6} {label} {text}")
        gate = getattr(getattr(event, "data", None), "gate", None)
        if event.type == "gate.failed" and gate is not None:
            self.gate_failures(gate)
        proposal = getattr(getattr(event, "data", None), "proposal", None)
        if event.type == "proposal.created" and proposal is not None:
            pid = safe(proposal.proposal_id)
            self.out.line(
                self.out.style("       needs a person:", "magenta", "bold")
                + f" review with `ito-tui proposals {safe(proposal.run_id)}`, then "
                f"`ito-tui approve {pid}` or `ito-tui reject {pid}`"
            )

    def gate_failures(self, gate: Gate) -> None:
        """One line per failing benchmark of `gate` (once per gate, human mode only)."""
        if self.as_json or gate.gate_id in self._gates_told:
            return
        self._gates_told.add(gate.gate_id)
        label = self.out.style("gate failed:", "red", "bold")
        for r in gate.failing:
            self.out.line(f"       {label} {failing_text(r)}")

    def connection(self, state: ConnectionState) -> None:
        """Report the connection on stderr (never on stdout, which may be a JSON stream):
        the first reconnect of a flapping episode, then only summaries (`Flaps`)."""
        if state.status == "reconnecting" and state.reconnects > self._reconnects:
            self._reconnects = state.reconnects
            for line in self._flaps.reconnect(
                safe(state.error or "no reason given"), state.retry_in_s
            ):
                self.out.info(line)
        elif state.status == "resynced" and state.note != self._note:
            self._note = state.note
            if state.note:
                self.out.info(safe(state.note))
            else:
                self.out.info("resynced from a snapshot (older events expired on the server)")

    def close(self) -> None:
        """Say how unstable the connection was, if that was not said yet."""
        for line in self._flaps.close():
            self.out.info(line)
