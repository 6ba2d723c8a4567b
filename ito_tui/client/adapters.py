"""The response adapters of `ItoClient`, each built on first use and kept.

Building all of them at import cost ~57 ms, paid even by a command that sends one
request (issue 8, #2b), so each is a cached zero-argument function.
"""

from __future__ import annotations

from functools import cache

from pydantic import TypeAdapter

from ito_tui.contract import (
    Booking,
    Capabilities,
    Checkpoint,
    Estimate,
    Fleet,
    LogPage,
    Page,
    Proposal,
    Run,
    RunSummary,
    TelemetryPage,
    WhoAmI,
)
from ito_tui.contract.sample_dicts import SampleDictPage

__all__ = [
    "BOOKING",
    "BOOKING_PAGE",
    "CAPS",
    "CHECKPOINTS",
    "ESTIMATE",
    "FLEET",
    "LOG_PAGE",
    "PROPOSAL",
    "PROPOSALS",
    "PROPOSAL_PAGE",
    "RUN",
    "RUN_PAGE",
    "TELEMETRY",
    "TELEMETRY_DICTS",
    "WHOAMI",
]

CAPS = cache(lambda: TypeAdapter(Capabilities))
WHOAMI = cache(lambda: TypeAdapter(WhoAmI))
BOOKING = cache(lambda: TypeAdapter(Booking))
BOOKING_PAGE = cache(lambda: TypeAdapter(Page[Booking]))
ESTIMATE = cache(lambda: TypeAdapter(Estimate))
RUN = cache(lambda: TypeAdapter(Run))
RUN_PAGE = cache(lambda: TypeAdapter(Page[RunSummary]))
TELEMETRY = cache(lambda: TypeAdapter(TelemetryPage))
TELEMETRY_DICTS = cache(lambda: TypeAdapter(SampleDictPage))
FLEET = cache(lambda: TypeAdapter(Fleet))
LOG_PAGE = cache(lambda: TypeAdapter(LogPage))
CHECKPOINTS = cache(lambda: TypeAdapter(list[Checkpoint]))
PROPOSALS = cache(lambda: TypeAdapter(list[Proposal]))
PROPOSAL = cache(lambda: TypeAdapter(Proposal))
PROPOSAL_PAGE = cache(lambda: TypeAdapter(Page[Proposal]))
