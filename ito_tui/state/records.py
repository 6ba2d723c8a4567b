"""Small immutable records kept by `RunState` (rewinds, spikes, failures) and its bounds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple, TypeVar

from ito_tui.contract import STAGE_ORDER, Stage

__all__ = [
    "MAX_CHECKPOINTS",
    "MAX_HISTORY",
    "CheckpointFailure",
    "LossSpike",
    "Rewind",
    "all_stages",
    "bounded",
    "with_item",
]

MAX_CHECKPOINTS = 64
"""Checkpoints kept in the snapshot (newest last); older ones stay on the backend."""
MAX_HISTORY = 256
"""Bound of every other per-run history tuple (faults, spikes, warnings, rewinds)."""

T = TypeVar("T")
V = TypeVar("V")


class Rewind(NamedTuple):
    """A step rewind: an approved rollback, or telemetry whose step went backwards."""

    from_step: int
    to_step: int
    seq: int


class LossSpike(NamedTuple):
    """A loss spike: `action` is "skipped" (batches skipped) or "escalated" (a proposal)."""

    seq: int
    step: int
    loss: float
    loss_z: float
    action: str


class CheckpointFailure(NamedTuple):
    """A checkpoint that could not be written."""

    seq: int
    step: int
    reason: str


def bounded(items: tuple[T, ...], new: T, limit: int = MAX_HISTORY) -> tuple[T, ...]:
    """`items + (new,)`, dropping the oldest beyond `limit`."""
    if len(items) >= limit:
        return (*items[len(items) - limit + 1 :], new)
    return (*items, new)


def with_item(mapping: Mapping[str, V], key: str, value: V) -> Mapping[str, V]:
    """A read-only copy of `mapping` with `key` set (the original is left alone)."""
    new = dict(mapping)
    new[key] = value
    return MappingProxyType(new)


def all_stages(stages: Iterable[Stage]) -> tuple[Stage, ...]:
    """The nine pipeline stages in order; stages missing from `stages` are pending."""
    by_name: dict[str, Stage | None] = {str(s.name): s for s in stages}
    ordered = tuple(by_name.pop(name.value, None) or Stage(name=name) for name in STAGE_ORDER)
    # A stage name this client does not know is kept, after the known ones.
    return ordered + tuple(s for s in by_name.values() if s is not None)
