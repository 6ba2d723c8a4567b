"""A frozen decision trail for the Decisions screen's snapshots and literal-text tests.

The shell's offline client (`FakeShellClient`) grown the calls the Decisions screen, the
palette and a proposal's modal make: `all_proposals` (filtered as desk_sim filters) and
`telemetry` (a loss curve with a spike just before the first proposal was asked).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from ito_tui.contract import Proposal, TelemetryPage

from .pipeline_fakes import sample
from .shell_fakes import NOW, FakeShellClient

RUN_A, RUN_B, RUN_C = "run_4be1c07a93d2", "run_9f03d2e6b7aa", "run_c2d88e14f0b5"


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


class FakeTrailClient(FakeShellClient):
    """`FakeShellClient` with a decision trail and the loss of its runs."""

    def __init__(self, proposals: list[Proposal] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.trail = trail() if proposals is None else proposals
        self.trail_reads: list[dict[str, Any]] = []
        self.telemetry_reads: list[str] = []
        self.trail_error: BaseException | None = None

    async def all_proposals(
        self,
        *,
        status: str | None = None,
        run_id: str | None = None,
        decided_by: str | None = None,
        since: datetime | None = None,
        all_pages: bool = True,
    ) -> list[Proposal]:
        self._check()
        self.trail_reads.append({"status": status, "since": since})
        if self.trail_error is not None:
            raise self.trail_error
        return [
            p
            for p in self.trail
            if (status is None or str(p.status) == status)
            and (run_id is None or p.run_id == run_id)
            and (decided_by is None or p.decided_by == decided_by)
            and (since is None or p.created_at >= since)
        ]

    async def telemetry(
        self, run_id: str, since_seq: int | None = None, max_points: int | None = None
    ) -> TelemetryPage:
        self.telemetry_reads.append(run_id)
        asked = sorted(p.created_at for p in self.trail if p.run_id == run_id)
        # A window ending at each ask, numbered on as one run's samples are.
        samples = [s for n, at in enumerate(asked) for s in loss_page(at, 1000 * n).items]
        return TelemetryPage(items=samples)
