"""The inspector's marks: the `Mark`s an event puts on the x axis (faults, recoveries,
checkpoints, rewinds, gate verdicts, proposals), and `MarkLog`, the bounded list a
`RunTracker` keeps of them.

Labels are our words with the backend's ids and kinds literal (`textsafe.one_line`,
bounded), never its prose (a failure's reason, a proposal's rationale): the event
line and the logs say those.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from ito_tui.describe import proposal_words
from ito_tui.format import integer, stage_label
from ito_tui.textsafe import one_line

from .inspect_points import Mark, MarkKind

if TYPE_CHECKING:
    from ito_tui.contract import EventBase

    from .run import RunState

__all__ = ["MAX_MARKS", "MarkLog", "event_marks"]

MAX_MARKS = 1024
"""Marks a run keeps: the newest, half for checkpoints, half for the rest (`MarkLog`;
the event log and the timeline keep their own)."""
_ID = 48
"""Characters of a backend id or kind a label keeps."""


def _s(value: object) -> str:
    return one_line(str(value), _ID)


def _fault(d: Any) -> tuple[str, int | None]:
    on = f" on {_s(d.node)}" if d.node else ""
    return f"fault {_s(d.kind)}{on} ({_s(d.fault_id)})", d.step


def _recovery(d: Any) -> tuple[str, int | None]:
    lost = f" · {integer(d.lost_steps)} steps lost" if d.lost_steps else ""
    return f"recovery {_s(d.kind)}{lost} ({_s(d.fault_id)})", d.resumed_from_step


def _checkpoint(d: Any) -> tuple[str, int | None]:
    c = d.checkpoint
    return f"checkpoint step {integer(c.step)} ({_s(c.checkpoint_id)})", c.step


def _checkpoint_failed(d: Any) -> tuple[str, int | None]:
    return f"checkpoint failed at step {integer(d.step)}", d.step


def _gate(d: Any) -> tuple[str, int | None]:
    g = d.gate
    return f"gate {stage_label(g.stage)} {_s(g.status)} ({_s(g.gate_id)})", None


def _proposal(d: Any) -> tuple[str, int | None]:
    p = d.proposal
    words = proposal_words(p.kind).short
    return f"proposal {_s(p.proposal_id)} ({words}) {_s(p.status)}", None


_MARKS: dict[str, tuple[MarkKind, Any]] = {
    "fault.detected": ("fault", _fault),
    "fault.recovered": ("recovery", _recovery),
    "checkpoint.saved": ("checkpoint", _checkpoint),
    "checkpoint.failed": ("checkpoint", _checkpoint_failed),
    "gate.passed": ("gate", _gate),
    "gate.failed": ("gate", _gate),
    "proposal.created": ("proposal", _proposal),
    "proposal.approved": ("proposal", _proposal),
    "proposal.rejected": ("proposal", _proposal),
    "proposal.expired": ("proposal", _proposal),
    "proposal.executed": ("proposal", _proposal),
}
MARKED_TYPES = frozenset(_MARKS)
"""Event types that put a mark (a rewind comes from the state: `event_marks`)."""


def event_marks(
    before: RunState | None,
    after: RunState | None,
    event: EventBase,
    *,
    ts: float | None,
    step: int | None,
    tokens: int | None,
) -> tuple[Mark, ...]:
    """The marks `event` (which took `before` to `after`; None for an event replayed as
    history) puts at the newest sample's `ts`, `step` and `tokens` (None before any
    sample: the event's own time). A mark naming its own step keeps it, with tokens
    unknown unless it is the newest sample's step (the inspector maps the rest)."""
    at = event.ts.timestamp() if ts is None else ts
    out: list[Mark] = []
    entry = _MARKS.get(event.type)
    data = getattr(event, "data", None)
    if entry is not None and data is not None:
        kind, make = entry
        label, own = make(data)
        mark_step = step if own is None else own
        mark_tokens = tokens if mark_step == step else None
        out.append(Mark(kind, event.seq, at, mark_step, mark_tokens, label))
    if before is not None and after is not None:
        rewinds = after.rewinds
        if (
            rewinds is not before.rewinds
            and rewinds
            and (not before.rewinds or rewinds[-1] is not before.rewinds[-1])
        ):
            rw = rewinds[-1]
            label = f"rewind {integer(rw.from_step)}→{integer(rw.to_step)}"
            out.append(Mark("rewind", event.seq, at, rw.to_step, None, label))
    return tuple(out)


class MarkLog:
    """The newest marks, each (seq, kind, label) once, read in seq order: at most half of
    `capacity` checkpoints (routine, every few minutes) and half of every other kind, so
    a multi-week run's checkpoints never push its first fault or rollback out."""

    __slots__ = ("_cache", "_routine", "_seen", "_telling")

    def __init__(self, capacity: int = MAX_MARKS) -> None:
        half = max(1, capacity // 2)
        self._routine: deque[Mark] = deque(maxlen=half)
        self._telling: deque[Mark] = deque(maxlen=max(1, capacity - half))
        self._seen: set[tuple[int, str, str]] = set()
        self._cache: tuple[Mark, ...] | None = ()

    def add(self, marks: tuple[Mark, ...]) -> None:
        for m in marks:
            key = (m.seq, m.kind, m.label)
            if key in self._seen:
                continue
            kept = self._routine if m.kind == "checkpoint" else self._telling
            if len(kept) == kept.maxlen:
                old = kept[0]
                self._seen.discard((old.seq, old.kind, old.label))
            kept.append(m)
            self._seen.add(key)
            self._cache = None

    def marks(self) -> tuple[Mark, ...]:
        """Every kept mark, oldest seq first."""
        if self._cache is None:
            self._cache = tuple(sorted((*self._routine, *self._telling), key=lambda m: m.seq))
        return self._cache

    def __len__(self) -> int:
        return len(self._routine) + len(self._telling)
