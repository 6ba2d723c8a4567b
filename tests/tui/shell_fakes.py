"""Frozen, offline data for the shell's screens and the Decisions screen, over the support
fake (`tests.support.fakes.FakeClient`).

Bookings come from the simulator's seed and estimates from its planner, so what the
snapshots show is what desk_sim would answer, only without a server, a clock or a
network: every frame is the same on every run. The decision trail is five proposals on
three runs, with the loss of each run before each ask (a spike just before it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ito_tui.contract import Booking, Proposal, TelemetryPage, TelemetrySample
from ito_tui.desk_sim.catalog import seed_bookings
from tests.support.caps import capabilities
from tests.support.fakes import FakeClient

from .pipeline_fakes import sample

__all__ = [
    "NOW",
    "RUN_A",
    "RUN_B",
    "RUN_C",
    "FakeShellClient",
    "FakeTrailClient",
    "capabilities",
    "loss_page",
    "proposal",
    "trail",
]

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
RUN_A, RUN_B, RUN_C = "run_4be1c07a93d2", "run_9f03d2e6b7aa", "run_c2d88e14f0b5"


@dataclass(kw_only=True)
class FakeShellClient(FakeClient):
    """`FakeClient` over desk_sim's seed bookings at NOW (no runs, no proposals)."""

    booking_list: list[Booking] = field(default_factory=lambda: seed_bookings(NOW))
    now: datetime = NOW


def proposal(
    pid: str,
    run_id: str,
    status: str,
    *,
    asked: datetime,
    kind: str = "rollback_and_skip",
    by: str | None = None,
    decided: datetime | None = None,
    comment: str | None = None,
) -> Proposal:
    """A proposal as desk_sim records it (an expired one has `decided_at`, no `decided_by`)."""
    rollback = kind != "extend_budget"
    body: dict[str, Any] = {
        "proposal_id": pid,
        "run_id": run_id,
        "kind": kind,
        "status": status,
        "created_at": asked.isoformat(),
        "expires_at": (asked + timedelta(minutes=3)).isoformat(),
        "on_expiry": "reject",
        "trigger": (
            {
                "reason": "loss spike z=14.8 over a 128-step window (escalation threshold z >= 8)",
                "step": 10871,
                "loss": 3.159,
                "loss_z": 14.8,
                "window": 128,
            }
            if rollback
            else {"reason": "projected spend $27,400.00 exceeds the $25,000.00 budget"}
        ),
        "action": (
            {"rollback_to_step": 10500, "checkpoint_id": "ckpt_10500", "skip_batches": 300}
            if rollback
            else {"extra_budget_usd": "2500.00"}
        ),
        "impact": {
            "lost_steps": 371 if rollback else 0,
            "added_gpu_hours": 12.4,
            "added_usd": "31.00" if rollback else "2500.00",
        },
        "run_paused": rollback,
        "decided_by": by,
        "decided_at": decided.isoformat() if decided else None,
        "comment": comment,
    }
    return Proposal.model_validate(body)


def trail() -> list[Proposal]:
    """Five proposals on three runs, newest first: one pending (2m10s left at NOW), an
    approval carried out, a rejection, an expiry and a budget extension."""
    m = timedelta(minutes=1)
    return [
        proposal("prop_c2d88e14f0b5_1", RUN_C, "pending", asked=NOW - timedelta(seconds=50)),
        proposal(
            "prop_9f03d2e6b7aa_2",
            RUN_B,
            "executed",
            kind="extend_budget",
            asked=NOW - 42 * m,
            by="alice",
            decided=NOW - 41 * m,
            comment="ok, eval budget was short",
        ),
        proposal(
            "prop_4be1c07a93d2_2",
            RUN_A,
            "rejected",
            asked=NOW - 95 * m,
            by="bob",
            decided=NOW - 94 * m,
            comment="spike is a bad shard, skipping it is enough",
        ),
        proposal("prop_9f03d2e6b7aa_1", RUN_B, "expired", asked=NOW - 26 * 60 * m,
                 decided=NOW - 26 * 60 * m + 3 * m),
        proposal(
            "prop_4be1c07a93d2_1",
            RUN_A,
            "executed",
            asked=NOW - 30 * 60 * m,
            by="alice",
            decided=NOW - 30 * 60 * m + 2 * m,
            comment="roll back, same as last week",
        ),
    ]  # fmt: skip


def loss_page(until: datetime, first_seq: int = 0, points: int = 120) -> TelemetryPage:
    """A falling loss curve, 10 s apart, with a spike in its last minute, ending at `until`
    (then 30 samples after it, which a modal's loss window must not show)."""
    items = []
    for i in range(points + 30):
        ts = until - timedelta(seconds=10 * (points - i))
        loss = 2.4 + 0.6 * math.exp(-i / 40) + (0.8 if points - 6 <= i <= points else 0.0)
        items.append(sample(first_seq + i + 1, 10000 + i, ts, loss))
    return TelemetryPage.model_validate({"items": items})


def loss_of(proposals: list[Proposal]) -> dict[str, list[TelemetrySample]]:
    """Each run's loss: a window ending at each of its asks, numbered on as one run's
    samples are."""
    by_run: dict[str, list[TelemetrySample]] = {}
    for run_id in {p.run_id for p in proposals}:
        asked = sorted(p.created_at for p in proposals if p.run_id == run_id)
        by_run[run_id] = [s for n, at in enumerate(asked) for s in loss_page(at, 1000 * n).items]
    return by_run


@dataclass
class FakeTrailClient(FakeShellClient):
    """`FakeShellClient` with a decision trail (`trail()` unless given) and its runs' loss."""

    trail: list[Proposal] = field(default_factory=lambda: trail())

    def __post_init__(self) -> None:
        self.samples = self.samples or loss_of(self.trail)
