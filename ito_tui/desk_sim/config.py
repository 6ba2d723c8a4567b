"""Configuration of the simulated desk backend (`SimConfig`) and its fixed limits."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Literal

SERVER_NAME = "ito-desk-sim"
SERVER_VERSION = "0.1.0"

MAX_BUDGET_USD = Decimal("5000000.00")
"""The ceiling a spec's `budget_usd` may not exceed (`limits.max_budget_usd`)."""

DEMO_SPEED = 3600.0
"""Simulated seconds per wall second for `ito-tui demo` (one simulated hour a second): a
showcase run of the reference spec (8B on 4x8 H100 infiniband, 160B tokens, SFT+DPO) takes
about four minutes of wall time, one of them waiting on the rollback proposal."""

SCENARIOS = (
    "showcase",
    "happy",
    "gate-fail",
    "loss-spike",
    "node-failure",
    "budget",
    "refused",
    "straggler",
    "hang",
    "log-flood",
)

Mode = Literal["simulated", "scaffold"]


@dataclass
class SimConfig:
    """Everything that shapes one simulated backend process.

    `speed` is simulated seconds per wall second. While a run waits for a person
    (a paused rollback proposal) its clock runs at `min(speed, approval_speed)`,
    so a proposal stays open for a human-sized time at any demo speed;
    `approval_speed=None` keeps the run at `speed` throughout.
    """

    db_path: Path | None = None
    speed: float = 60.0
    scenario: str = "showcase"
    seed: int = 0
    mode: Mode = "simulated"
    tokens: dict[str, str] = field(default_factory=dict)
    """Bearer token -> operator name."""
    heartbeat_s: float = 15.0
    event_retention: int = 100_000
    log_line_bytes: int = 4096
    """The job log cuts a line at this many UTF-8 bytes (`limits.log_line_bytes`)."""
    log_retention: int = 100_000
    """Job log lines kept per run (`limits.log_retention`); older ones are dropped."""
    tick_s: float = 0.1
    approval_speed: float | None = 240.0
    proposal_ttl_s: float = 4 * 3600.0
    """How long (simulated seconds) a proposal stays pending before it expires (rejects)."""
    preflight_delay_s: float = 0.0
    """Wall seconds a run creation takes before it answers (tests use it to race keys)."""
    history: str | None = None
    """A scenario: an empty store starts with one finished run of it (`history.py`)."""

    @staticmethod
    def tokens_from_env(value: str | None = None) -> dict[str, str]:
        """Parse `ITO_SIM_TOKENS="alice:s3cret,bob:hunter2"` into token -> operator."""
        raw = os.environ.get("ITO_SIM_TOKENS", "") if value is None else value
        tokens: dict[str, str] = {}
        for pair in raw.split(","):
            operator, sep, token = pair.strip().partition(":")
            if sep and operator and token:
                tokens[token] = operator
        return tokens
