"""Resources of API.md v1.1 "diagnosing a run": job logs (`runs.logs`) and the fleet
(`runs.fleet`). Pure data, like the rest of the contract.

A log line's `text` is what the process wrote (UTF-8, cut by the server at
`limits.log_line_bytes` and then marked `cut`); it may hold ANSI colour codes, `\\r`
progress bars or NUL. The contract keeps it as sent: rendering it inert is the
client's job (`ito_tui.textsafe`, `state/logbuffer.py`), never the model's.
"""

from __future__ import annotations

from enum import StrEnum

from .common import Frac, Measure, OnRunClock, Resource, Timestamp


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"


LOG_LEVEL_ORDER = tuple(LogLevel)
"""Levels from least to most severe: `level=` on the wire is a minimum."""


class LogSource(StrEnum):
    trainer = "trainer"
    torchft = "torchft"
    nccl = "nccl"
    dataloader = "dataloader"
    checkpoint = "checkpoint"
    system = "system"


class LogLine(Resource, OnRunClock):
    """One line of a run's job log (`event: log` on `GET /v1/runs/{id}/logs`)."""

    seq: int
    ts: Timestamp
    sim_ts: Timestamp | None = None
    rank: int | None = None
    node: str | None = None
    replica_id: str | None = None
    level: LogLevel | str = LogLevel.info
    source: LogSource | str = LogSource.trainer
    text: str
    cut: bool = False
    """The server cut the line at `limits.log_line_bytes`."""


class LogTruncated(Resource):
    """`event: log.truncated`: a resume older than the server's retention; `dropped`
    lines are gone, the stream continues with the oldest line it still has."""

    dropped: int


class LogPage(Resource):
    """`GET /v1/runs/{id}/logs/page?before_seq=&limit=`: older lines, oldest first;
    `next_before_seq` is null when there is nothing older."""

    items: list[LogLine]
    next_before_seq: int | None = None


class NodeState(StrEnum):
    healthy = "healthy"
    degraded = "degraded"
    failed = "failed"
    replaced = "replaced"
    draining = "draining"


class ReplicaState(StrEnum):
    healthy = "healthy"
    recovering = "recovering"
    joining = "joining"
    lost = "lost"


class Quorum(Resource):
    quorum_id: int
    participants: int
    min_replicas: int
    age_s: Measure | None = None
    status_text: str = ""


class Replica(Resource):
    replica_id: str
    state: ReplicaState | str
    step: int
    heartbeat_age_s: Measure | None = None
    nodes: list[str] = []


class GpuCounters(Resource):
    """One GPU's counters, as DCGM/NVML report them. Every number may be null."""

    index: int
    util_frac: Frac | None = None
    mem_used_gib: Measure | None = None
    mem_total_gib: Measure | None = None
    temp_c: Measure | None = None
    power_w: Measure | None = None
    xid_errors: int = 0
    ecc_errors_uncorrected: int = 0


class FleetNode(Resource):
    hostname: str
    replica_id: str | None = None
    state: NodeState | str
    step_time_s_p50: Measure | None = None
    step_time_s_p99: Measure | None = None
    straggler: bool = False
    nccl_timeouts: int = 0
    gpus: list[GpuCounters] = []


class Fleet(Resource, OnRunClock):
    """`GET /v1/runs/{id}/fleet`: the torchft lighthouse's view joined with per-node GPU
    counters and per-rank step timing."""

    ts: Timestamp
    sim_ts: Timestamp | None = None
    quorum: Quorum
    replicas: list[Replica] = []
    nodes: list[FleetNode] = []
