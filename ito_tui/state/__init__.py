"""Pure, synchronous run state: reducers, bounded telemetry history, the event log.

No I/O, no textual, no httpx: shared by the TUI and the CLI's `watch`.
"""

from .bank import METRICS, TelemetryBank
from .eventlog import NOISY_TYPES, SEVERITIES, EventLog, LogEntry, describe, severity_of
from .records import MAX_CHECKPOINTS, MAX_HISTORY, CheckpointFailure, LossSpike, Rewind
from .run import Outcome, RunState
from .telemetry import NAN_BIT, NEG_INF_BIT, POS_INF_BIT, Column, SeriesView, TelemetrySeries
from .tracker import RunTracker

__all__ = [
    "MAX_CHECKPOINTS",
    "MAX_HISTORY",
    "METRICS",
    "NAN_BIT",
    "NEG_INF_BIT",
    "NOISY_TYPES",
    "POS_INF_BIT",
    "SEVERITIES",
    "CheckpointFailure",
    "Column",
    "EventLog",
    "LogEntry",
    "LossSpike",
    "Outcome",
    "Rewind",
    "RunState",
    "RunTracker",
    "SeriesView",
    "TelemetryBank",
    "TelemetrySeries",
    "describe",
    "severity_of",
]
