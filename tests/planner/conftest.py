"""Shared fixtures for the planner tests: the seeded desk and a planner bound to it."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from ito_tui.contract import Booking, Estimate
from ito_tui.desk_sim.catalog import seed_bookings
from ito_tui.desk_sim.planner import plan_and_estimate

from .factories import MAX_BUDGET, NOW, make_spec

Planner = Callable[..., Estimate]


@pytest.fixture(scope="session")
def desk() -> dict[str, Booking]:
    """The seeded bookings by id, windows relative to NOW."""
    return {b.booking_id: b for b in seed_bookings(NOW)}


@pytest.fixture(scope="session")
def plan(desk: dict[str, Booking]) -> Planner:
    """Plan a spec on a seeded booking: `plan("bk_h100_1n", "405B", budget_usd=...)`."""

    def run(
        booking_id: str, model_size: str = "8B", *, max_budget: Decimal = MAX_BUDGET, **fields: Any
    ) -> Estimate:
        spec = make_spec(booking_id, model_size, **fields)
        return plan_and_estimate(spec, desk[booking_id], max_budget_usd=max_budget, now=NOW)

    return run
