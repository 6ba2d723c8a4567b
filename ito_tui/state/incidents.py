"""Reducers of what happens to a training run: checkpoints, faults, SLOs, spikes, proposals.

Same rules as `reducers.py`: pure, never mutating, only the changed fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ito_tui.contract import Checkpoint, FaultRecord, Proposal

from .records import (
    MAX_CHECKPOINTS,
    CheckpointFailure,
    LossSpike,
    Rewind,
    bounded,
    with_item,
)

if TYPE_CHECKING:
    from .run import RunState

__all__ = [
    "checkpoint_failed",
    "checkpoint_saved",
    "fault_detected",
    "fault_recovered",
    "loss_spike",
    "proposal_changed",
    "slo_breached",
]

_PROPOSAL_STATUS = {
    "proposal.approved": "approved",
    "proposal.rejected": "rejected",
    "proposal.expired": "expired",
    "proposal.executed": "executed",
}


def _upsert_fault(
    faults: tuple[FaultRecord, ...],
    fault_id: str,
    make: Callable[[FaultRecord | None], FaultRecord],
) -> tuple[FaultRecord, ...]:
    for i, f in enumerate(faults):
        if f.fault_id == fault_id:
            return (*faults[:i], make(f), *faults[i + 1 :])
    return bounded(faults, make(None))


# ---------------------------------------------------------------- checkpoints & faults


def checkpoint_saved(s: RunState, ev: Any) -> RunState:
    """Keep the checkpoint (newest last, one entry per id, bounded)."""
    ckpt: Checkpoint = ev.data.checkpoint
    kept = tuple(c for c in s.checkpoints if c.checkpoint_id != ckpt.checkpoint_id)
    return s.evolve(last_seq=ev.seq, checkpoints=bounded(kept, ckpt, MAX_CHECKPOINTS))


def checkpoint_failed(s: RunState, ev: Any) -> RunState:
    """Record a checkpoint that could not be written."""
    rec = CheckpointFailure(ev.seq, ev.data.step, ev.data.reason)
    return s.evolve(last_seq=ev.seq, checkpoint_failures=bounded(s.checkpoint_failures, rec))


def fault_detected(s: RunState, ev: Any) -> RunState:
    """Open (or update) the fault's record."""
    d = ev.data

    def make(old: FaultRecord | None) -> FaultRecord:
        base = {"kind": d.kind, "node": d.node, "step": d.step}
        if old is None:
            return FaultRecord(fault_id=d.fault_id, detected_after_s=d.detected_after_s, **base)
        return old.model_copy(update={**base, "detected_after_s": d.detected_after_s})

    return s.evolve(last_seq=ev.seq, faults=_upsert_fault(s.faults, d.fault_id, make))


def fault_recovered(s: RunState, ev: Any) -> RunState:
    """Close the fault's record: recovered, how long the resume took, steps lost."""
    d = ev.data
    update = {"recovered": True, "resumed_after_s": d.resumed_after_s, "lost_steps": d.lost_steps}

    def make(old: FaultRecord | None) -> FaultRecord:
        if old is None:
            return FaultRecord(fault_id=d.fault_id, kind=d.kind, node=d.node, **update)
        return old.model_copy(update=update)

    return s.evolve(last_seq=ev.seq, faults=_upsert_fault(s.faults, d.fault_id, make))


def slo_breached(s: RunState, ev: Any) -> RunState:
    """Record the breach, and name the SLO on its fault's record."""
    d = ev.data
    faults = s.faults
    slo = str(d.slo)
    if d.fault_id is not None and any(f.fault_id == d.fault_id for f in faults):

        def make(old: FaultRecord | None) -> FaultRecord:
            assert old is not None  # only called for an existing fault
            if slo in old.slo_breached:
                return old
            return old.model_copy(update={"slo_breached": [*old.slo_breached, slo]})

        faults = _upsert_fault(faults, d.fault_id, make)
    return s.evolve(last_seq=ev.seq, faults=faults, slo_breaches=bounded(s.slo_breaches, d))


def loss_spike(s: RunState, ev: Any) -> RunState:
    """Record a spike: skipped (handled by the backend) or escalated (a proposal follows)."""
    d = ev.data
    spike = LossSpike(ev.seq, d.step, d.loss, d.loss_z, str(d.action))
    return s.evolve(last_seq=ev.seq, loss_spikes=bounded(s.loss_spikes, spike))


# ---------------------------------------------------------------- proposals


def proposal_changed(s: RunState, ev: Any) -> RunState:
    """Keep the proposal and the pending set; an approved rollback records a rewind once."""
    p: Proposal = ev.data.proposal
    status = _PROPOSAL_STATUS.get(ev.type)
    if status is not None and str(p.status) != status:
        # The event type says what happened; a stale status in the body does not undo it.
        p = p.model_copy(update={"status": status})
    pid = p.proposal_id
    if str(p.status) == "pending":
        # Oldest first: a proposal already waiting keeps its place.
        pending = s.pending_proposals
        if pid not in pending:
            pending = (*pending, pid)
    else:
        pending = tuple(x for x in s.pending_proposals if x != pid)
    changes: dict[str, Any] = {
        "last_seq": ev.seq,
        "proposals": with_item(s.proposals, pid, p),
        "pending_proposals": pending,
    }
    to_step = p.action.rollback_to_step
    if (
        str(p.kind) == "rollback_and_skip"
        and status in ("approved", "executed")
        and to_step is not None
        and pid not in s.rewound
    ):
        if s.telemetry is not None:
            from_step = s.telemetry.step
        else:
            from_step = p.trigger.step if p.trigger.step is not None else to_step
        changes["rewinds"] = bounded(s.rewinds, Rewind(from_step, to_step, ev.seq))
        changes["rewound"] = s.rewound | {pid}
    return s.evolve(**changes)
