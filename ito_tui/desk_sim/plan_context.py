"""What the planner derived for one spec on one booking, shared by its checks and explanations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ito_tui.contract import Booking, TrainingSpec

from .catalog import GpuSku, ModelArch
from .plan_layout import LayoutChoice
from .plan_perf import Layout, SpeedEstimate

__all__ = ["PlanContext"]


@dataclass(frozen=True)
class PlanContext:
    """Everything derived while planning, for refusals, warnings and rationale."""

    spec: TrainingSpec
    booking: Booking
    sku: GpuSku
    arch: ModelArch
    choice: LayoutChoice
    """The layout search's outcome; `choice.memory` matches `layout`."""
    layout: Layout
    speed: SpeedEstimate
    target_tokens: int
    critical_batch: float
    """DeepSeek-style optimal global batch in tokens for this compute budget."""
    long_context: bool
    """Whether the target capability asks for a long-context stage."""
    chaos: float
    now: datetime
