"""Target capabilities a spec may ask for, and what each asks of the pipeline and its gates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["TARGET_CAPABILITIES", "TARGET_PROFILES", "TargetProfile", "wants_long_context"]


@dataclass(frozen=True)
class TargetProfile:
    """What a target capability asks of the pipeline and which benchmarks gate it."""

    name: str
    description: str
    long_context: bool = False
    focus: tuple[str, ...] = ()
    """Extra benchmarks this capability adds to the standard batteries."""


TARGET_PROFILES: Mapping[str, TargetProfile] = {
    "general-chat": TargetProfile("general-chat", "Broad knowledge and instruction following."),
    "code": TargetProfile("code", "Program synthesis and repair.", focus=("humaneval",)),
    "math-reasoning": TargetProfile(
        "math-reasoning", "Grade-school to competition maths.", focus=("gsm8k", "math")
    ),
    "long-context": TargetProfile(
        "long-context", "Retrieval and reasoning over long documents.", long_context=True
    ),
    "tool-use": TargetProfile("tool-use", "Function calling and agentic workflows."),
}
TARGET_CAPABILITIES: tuple[str, ...] = tuple(TARGET_PROFILES)
"""Capability names a spec may target (capabilities' `target_capabilities`)."""


def wants_long_context(target_capability: str) -> bool:
    """Whether `target_capability` adds the long-context stage (unknown targets do not)."""
    profile = TARGET_PROFILES.get(target_capability)
    return profile is not None and profile.long_context
