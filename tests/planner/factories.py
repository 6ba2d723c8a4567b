"""Builders for planner tests: a frozen clock and valid TrainingSpecs."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from ito_tui.contract import TrainingSpec

NOW = datetime(2026, 11, 29, 22, 0, tzinfo=UTC)
MAX_BUDGET = Decimal("1000000")


def make_spec(
    booking_id: str = "bk_h100_4n_ib", model_size: str = "8B", **fields: Any
) -> TrainingSpec:
    """A valid TrainingSpec with sensible defaults; keyword arguments override fields."""
    values: dict[str, Any] = {
        "booking_id": booking_id,
        "model_size": model_size,
        "data_ref": "catalog://fineweb-edu@v2",
        "target_capability": "general-chat",
        "budget_usd": Decimal("30000"),
    }
    values.update(fields)
    return TrainingSpec(**values)
