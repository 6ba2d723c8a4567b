"""A frozen, offline stand-in for ItoClient for the shell's snapshot tests.

Bookings come from the simulator's seed and estimates from its planner, so
what the snapshots show is what desk_sim would answer — only without a server,
a clock or a network, so every frame is the same on every run.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pydantic import SecretStr

from ito_tui.contract import (
    Booking,
    Capabilities,
    Estimate,
    Proposal,
    Run,
    RunSummary,
    TrainingSpec,
    WhoAmI,
)
from ito_tui.desk_sim.catalog import MODEL_SIZES, TARGET_CAPABILITIES, seed_bookings
from ito_tui.desk_sim.planner import plan_and_estimate

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
MAX_BUDGET = Decimal("5000000.00")
CAPABILITY_NAMES = (
    "bookings.read",
    "estimates.create",
    "runs.create",
    "runs.read",
    "runs.events",
    "runs.telemetry",
    "runs.cancel",
    "proposals.read",
    "proposals.decide",
    "sim.inject",
)


def capabilities(*, mode: str = "simulated", missing: tuple[str, ...] = ()) -> Capabilities:
    """Capabilities as desk_sim reports them (`missing` ones are not_implemented)."""
    return Capabilities.model_validate(
        {
            "api_version": "v1",
            "server": {"name": "ito-desk-sim", "version": "0.1.0", "mode": mode},
            "capabilities": [
                {
                    "name": name,
                    "status": "not_implemented" if name in missing else "available",
                    "detail": "scaffold: not wired yet" if name in missing else None,
                }
                for name in CAPABILITY_NAMES
            ],
            "model_sizes": list(MODEL_SIZES),
            "gpu_skus": ["H100-SXM-80GB", "H200-SXM-141GB", "B200-SXM-180GB"],
            "post_training": ["sft", "dpo", "rlvr"],
            "target_capabilities": list(TARGET_CAPABILITIES),
            "limits": {"max_budget_usd": str(MAX_BUDGET), "event_retention": 100000,
                       "heartbeat_s": 15},
        }
    )  # fmt: skip


class FakeShellClient:
    """The ItoClient methods the shell calls, answering from fixed data."""

    def __init__(
        self,
        *,
        bookings: list[Booking] | None = None,
        caps: Capabilities | None = None,
        operator: str | None = "alice",
        fail_with: BaseException | None = None,
    ) -> None:
        self._bookings = seed_bookings(NOW) if bookings is None else bookings
        self._caps = caps or capabilities()
        self._operator = operator
        self._fail_with = fail_with
        self.created: list[tuple[TrainingSpec, str | None]] = []
        self.estimates: list[TrainingSpec] = []
        self.token: SecretStr | None = SecretStr("s3cret")

    def _check(self) -> None:
        if self._fail_with is not None:
            raise self._fail_with

    async def capabilities(self, refresh: bool = False) -> Capabilities:
        self._check()
        return self._caps

    async def whoami(self) -> WhoAmI:
        from ito_tui.client import AuthError

        self._check()
        if self._operator is None:
            raise AuthError("Not authenticated: missing or invalid token", status=401)
        return WhoAmI(operator=self._operator)

    async def bookings(self, status: str | None = None, all_pages: bool = True) -> list[Booking]:
        self._check()
        return list(self._bookings)

    async def booking(self, booking_id: str) -> Booking:
        return next(b for b in self._bookings if b.booking_id == booking_id)

    async def runs(
        self, state: str | None = None, booking_id: str | None = None
    ) -> list[RunSummary]:
        self._check()
        return []

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
        return []

    async def estimate(self, spec: TrainingSpec) -> Estimate:
        self._check()
        self.estimates.append(spec)
        booking = await self.booking(spec.booking_id)
        return plan_and_estimate(spec, booking, max_budget_usd=MAX_BUDGET, now=NOW)

    async def create_run(self, spec: TrainingSpec, idempotency_key: str | None = None) -> Run:
        self.created.append((spec, idempotency_key))
        estimate = await self.estimate(spec)
        body: dict[str, Any] = {
            "run_id": f"run_{uuid.UUID(int=len(self.created)).hex[:8]}",
            "booking_id": spec.booking_id,
            "spec": spec.model_dump(mode="json"),
            "state": "queued",
            "plan": estimate.plan.model_dump(mode="json") if estimate.plan else None,
            "spend": {"usd_spent": "0", "usd_committed": "0", "budget_usd": str(spec.budget_usd)},
            "created_at": NOW.isoformat(),
            "updated_at": NOW.isoformat(),
        }
        return Run.model_validate(body)

    async def aclose(self) -> None:
        return None
