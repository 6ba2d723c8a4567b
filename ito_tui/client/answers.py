"""Every answer is checked against the question: the run, booking or proposal asked about.

A backend (or a cache, proxy or load balancer in front of it) that answers about
another object than the one asked for must never be reported as success nor
attributed to the wrong object: `GET /v1/runs/run_x` answering with `run_other`,
an approval answering about another proposal or with the proposal still
pending, a listing filtered by run holding another run's items. Each mismatch is
a ProtocolError naming the endpoint and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from ito_tui.contract import Proposal

from .errors import Conflict, ProtocolError, cut_text

__all__ = [
    "DECIDED",
    "after_seq",
    "check_conflict",
    "check_decision",
    "check_items",
    "check_newest_first",
    "check_same",
    "in_steps",
    "rfc3339",
]

DECIDED = {"approve": frozenset({"approved", "executed"}), "reject": frozenset({"rejected"})}
"""The statuses a proposal may have once a decision of each verb was recorded."""


def _shown(value: object) -> str:
    return cut_text(str(value), 120)


def check_same(endpoint: str, field: str, got: object, asked: object, noun: str = "") -> None:
    """Raise ProtocolError unless the answer's `field` (`got`) is what was asked for."""
    if str(got) == str(asked):
        return
    what = f"{noun} " if noun else ""
    raise ProtocolError(
        f"{endpoint}: answer is about {what}{_shown(got)}, asked for {what}{_shown(asked)}",
        field=field,
        endpoint=endpoint,
    )


def check_items(endpoint: str, items: Sequence[Any], **expected: str | None) -> None:
    """Every item's attribute equals the filter it was asked with (filters given as None skip)."""
    wanted = [(name, str(value)) for name, value in expected.items() if value is not None]
    if not wanted:
        return
    for index, item in enumerate(items):
        for name, value in wanted:
            got = getattr(item, name)
            if str(got) != value:
                raise ProtocolError(
                    f"{endpoint}: item {index} has {name} {_shown(got)}, asked for "
                    f"{name} {_shown(value)}",
                    field=f"{index}.{name}",
                    endpoint=endpoint,
                )


def check_decision(endpoint: str, verb: str, proposal_id: str, answer: Proposal) -> None:
    """A decision's answer is that proposal, in a status the decision leads to."""
    check_same(endpoint, "proposal_id", answer.proposal_id, proposal_id, "proposal")
    allowed = DECIDED[verb]
    if str(answer.status) not in allowed:
        raise ProtocolError(
            f"{endpoint}: answer says proposal {_shown(proposal_id)} is "
            f"{_shown(answer.status)} after {verb}; expected {' or '.join(sorted(allowed))}",
            field="status",
            endpoint=endpoint,
        )


def check_conflict(endpoint: str, proposal_id: str, exc: Conflict) -> None:
    """A 409 that carries the decided proposal must carry that one, decided."""
    current = exc.current
    if current is None:
        return
    check_same(endpoint, "proposal_id", current.proposal_id, proposal_id, "proposal")
    if str(current.status) == "pending":
        raise ProtocolError(
            f"{endpoint}: the backend refused the decision as already made, but says "
            f"proposal {_shown(proposal_id)} is still pending",
            field="status",
            endpoint=endpoint,
            status=exc.status,
        )


def after_seq(endpoint: str, seqs: Iterable[int], since_seq: int | None) -> None:
    """Items asked for `since_seq` all come after it."""
    if since_seq is None:
        return
    for index, seq in enumerate(seqs):
        if seq <= since_seq:
            raise ProtocolError(
                f"{endpoint}: item {index} has seq {seq}, asked for items after {since_seq}",
                field=f"items.{index}.seq",
                endpoint=endpoint,
            )


def in_steps(
    endpoint: str, steps: Iterable[int], from_step: int | None, to_step: int | None
) -> None:
    """Items asked for a step range (`from_step`..`to_step`, inclusive, either open) all
    lie in it: a backend that ignored the range answered another question."""
    if from_step is None and to_step is None:
        return
    lo = -1 if from_step is None else from_step
    hi = 2**63 if to_step is None else to_step
    for index, step in enumerate(steps):
        if not lo <= step <= hi:
            shown = (
                f"{'' if from_step is None else from_step}..{'' if to_step is None else to_step}"
            )
            raise ProtocolError(
                f"{endpoint}: item {index} has step {step}, asked for steps {shown}",
                field=f"items.{index}.step",
                endpoint=endpoint,
            )


def rfc3339(value: datetime) -> str:
    """An aware time as RFC 3339 UTC with `Z`, to the microsecond it has."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def check_newest_first(endpoint: str, items: Sequence[Proposal], since: datetime | None) -> None:
    """A trail's items come newest first (`created_at` never increases), none before `since`.

    Only `created_at` is checked: how a backend orders proposals created at the same
    instant is its own business.
    """
    previous: datetime | None = None
    for index, item in enumerate(items):
        if since is not None and item.created_at < since:
            raise ProtocolError(
                f"{endpoint}: item {index} was created at {rfc3339(item.created_at)}, asked "
                f"for proposals created since {rfc3339(since)}",
                field=f"{index}.created_at",
                endpoint=endpoint,
            )
        if previous is not None and item.created_at > previous:
            raise ProtocolError(
                f"{endpoint}: item {index} (created {rfc3339(item.created_at)}) is newer than "
                f"the one before it ({rfc3339(previous)}); asked for newest first",
                field=f"{index}.created_at",
                endpoint=endpoint,
            )
        previous = item.created_at
