"""Chart markers an event puts on every telemetry chart: rewinds, faults, recoveries,
checkpoints and gate verdicts.

A marker's label opens with its kind (`views.MarkerKind`), which is how a chart view
tells them apart; the bank stores only (x, label), bounded (`telemetry.MAX_MARKERS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ito_tui.format import integer

if TYPE_CHECKING:
    from ito_tui.contract import EventBase

    from .run import RunState

__all__ = ["event_markers"]


def _fault(d: Any) -> str:
    return f"fault {d.kind}" + (f" on {d.node}" if d.node else "")


def _recovery(d: Any) -> str:
    lost = f" · {integer(d.lost_steps)} steps lost" if d.lost_steps else ""
    return f"recovery {d.kind}{lost}"


def _checkpoint(d: Any) -> str:
    return f"checkpoint step {integer(d.checkpoint.step)}"


def _checkpoint_failed(d: Any) -> str:
    return f"checkpoint failed at step {integer(d.step)}"


def _gate(d: Any) -> str:
    return f"gate {d.gate.stage} {d.gate.status}"


_LABELS = {
    "fault.detected": _fault,
    "fault.recovered": _recovery,
    "checkpoint.saved": _checkpoint,
    "checkpoint.failed": _checkpoint_failed,
    "gate.passed": _gate,
    "gate.failed": _gate,
}


def event_markers(before: RunState, after: RunState, event: EventBase) -> tuple[str, ...]:
    """The labels of the markers `event` (which took `before` to `after`) adds."""
    labels: list[str] = []
    label = _LABELS.get(event.type)
    if label is not None:
        labels.append(label(getattr(event, "data")))  # noqa: B009 - dynamic event class
    rewinds = after.rewinds
    if (
        rewinds is not before.rewinds
        and rewinds
        and (not before.rewinds or rewinds[-1] is not before.rewinds[-1])
    ):
        rw = rewinds[-1]
        labels.append(f"rewind {integer(rw.from_step)}→{integer(rw.to_step)}")
    return tuple(labels)
