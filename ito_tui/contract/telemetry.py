"""Telemetry resources of the Itô training API v1: samples, goodput, checkpoint and RL stats."""

from __future__ import annotations

from pydantic import Field

from .common import Frac, Measure, Money, Resource, Timestamp
from .enums import StageName


class Goodput(Resource):
    """ML goodput = scheduling × runtime × program (Google's definition).

    Measured: each fraction may be null (not measured yet) or non-finite (0/0).
    """

    scheduling_frac: Frac | None
    runtime_frac: Frac | None
    program_frac: Frac | None
    ml_productivity_frac: Frac | None
    badput_s: dict[str, Measure | None] = {}


class CheckpointStats(Resource):
    last_step: int | None = None
    size_gb: Measure | None = None
    blocking_s: Measure | None = None
    persist_s: Measure | None = None
    write_gb_per_s: Measure | None = None
    age_s: Measure | None = None


class RlStats(Resource):
    reward_mean: Measure | None
    entropy: Measure | None
    max_staleness_steps: int
    staleness_bound: int
    filtered_group_frac: Frac | None
    ess_frac: Frac | None


class TelemetrySample(Resource):
    """One telemetry sample. Every measured number may be null (no value this sample)
    or NaN / ±Infinity (a diverged loss): API.md v1.1 makes both legal on the wire, and
    the client shows them as such. Identities and counts (seq, step, tokens) are ints."""

    seq: int
    ts: Timestamp
    stage: StageName | str
    step: int
    tokens_seen: int
    loss: Measure | None
    loss_z: Measure | None = None
    grad_norm: Measure | None = None
    lr: Measure | None = None
    tokens_per_s_per_gpu: Measure | None
    mfu_frac: Frac | None = None
    mem_max_reserved_gib: Measure | None
    goodput: Goodput
    interruptions_total: int = 0
    interruptions_per_1k_gpu_hours: Measure | None = 0.0
    checkpoint: CheckpointStats = Field(default_factory=CheckpointStats)
    spend_usd: Money
    rl: RlStats | None = None
    metrics: dict[str, Measure | None] = {}
    """Every further scalar the trainer logs, under torchtitan's names (API.md v1.1)."""


class TelemetryPage(Resource):
    items: list[TelemetrySample]
    next_since_seq: int | None = None
