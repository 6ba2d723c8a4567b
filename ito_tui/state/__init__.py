"""Pure, synchronous run state: reducers, bounded telemetry history, the event log, and
the immutable views every screen draws (`views`).

No I/O, no textual, no httpx: shared by the TUI and the CLI's `watch`.
"""

from .bank import TelemetryBank
from .changes import EVERYTHING, NOTHING, Changes
from .eventlog import NOISY_TYPES, SEVERITIES, EventLog, LogEntry, describe, severity_of
from .fleet import FleetView, fleet_view
from .fleet_events import NodeIncident
from .inspect import (
    InspectorView,
    Mark,
    Point,
    Reference,
    Viewport,
    XAxis,
    inspector_view,
    points_of,
)
from .logbuffer import LogBuffer, ShownLine
from .logfilter import LogFilter
from .metrics import BY_KEY, METRICS, Metric, Unit
from .projection import Projection, projection
from .records import MAX_CHECKPOINTS, MAX_HISTORY, CheckpointFailure, LossSpike, Rewind
from .run import Outcome, RunState
from .telemetry import NAN_BIT, NEG_INF_BIT, POS_INF_BIT, Column, SeriesView, TelemetrySeries
from .tracker import RunTracker
from .views import (
    ChartView,
    Marker,
    MarkerKind,
    Progress,
    StageView,
    chart_view,
    progress,
    progress_of_run,
    stage_views,
)

__all__ = [
    "BY_KEY",
    "EVERYTHING",
    "MAX_CHECKPOINTS",
    "MAX_HISTORY",
    "METRICS",
    "NAN_BIT",
    "NEG_INF_BIT",
    "NOISY_TYPES",
    "NOTHING",
    "POS_INF_BIT",
    "SEVERITIES",
    "Changes",
    "ChartView",
    "CheckpointFailure",
    "Column",
    "EventLog",
    "FleetView",
    "InspectorView",
    "LogBuffer",
    "LogEntry",
    "LogFilter",
    "LossSpike",
    "Mark",
    "Marker",
    "MarkerKind",
    "Metric",
    "NodeIncident",
    "Outcome",
    "Point",
    "Progress",
    "Projection",
    "Reference",
    "Rewind",
    "RunState",
    "RunTracker",
    "SeriesView",
    "ShownLine",
    "StageView",
    "TelemetryBank",
    "TelemetrySeries",
    "Unit",
    "Viewport",
    "XAxis",
    "chart_view",
    "describe",
    "fleet_view",
    "inspector_view",
    "points_of",
    "progress",
    "progress_of_run",
    "projection",
    "severity_of",
    "stage_views",
]
