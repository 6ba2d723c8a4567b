"""The one metric table: every telemetry metric the bank keeps and the panel charts.

`TelemetryBank` keeps a series per entry; the telemetry panel draws those with
`chart=True`, in this order, labelled and formatted by `unit`. A label that depends on
the run (the loss's stage, the memory's HBM, the staleness bound) is resolved by
`state.views.chart_view`, never copied into a widget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = ["BY_KEY", "METRICS", "Metric", "Unit"]

Unit = Literal["number", "fraction", "gib", "usd", "steps"]
"""How a metric's values are written (`format.metric_value(unit, value)`)."""


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric: its bank key, how a chart labels it, how its numbers read."""

    key: str
    """The bank's series name: "loss", "goodput", ..."""
    label: str
    """The chart's label, e.g. "goodput"."""
    description: str
    """A long human label, e.g. "ML goodput (ml_productivity_frac)"."""
    sublabel: str = ""
    """The chart's second label, e.g. "ML prod." (run-dependent ones: `views.chart_view`)."""
    unit: Unit = "number"
    floor: float | None = None
    """The chart's lowest y (0 for fractions and rates), or None to fit the data."""
    rl: bool = False
    """Shown only in RLVR."""
    chart: bool = True
    """Drawn in the telemetry panel (the gradient norm is kept but not charted)."""


METRICS: tuple[Metric, ...] = (
    Metric("loss", "loss", "training loss"),
    Metric("grad_norm", "grad norm", "gradient norm", chart=False),
    Metric(
        "goodput",
        "goodput",
        "ML goodput (ml_productivity_frac)",
        "ML prod.",
        "fraction",
        0.0,
    ),
    Metric("goodput_runtime", "goodput", "runtime goodput", "runtime", "fraction", 0.0),
    Metric("tokens_per_s_per_gpu", "tok/s/GPU", "tokens/s per GPU"),
    Metric("mfu", "MFU", "MFU", unit="fraction", floor=0.0),
    Metric("mem_gib", "memory", "max reserved memory (GiB)", "per GPU", "gib", 0.0),
    Metric(
        "interruptions_per_1k",
        "interrupts",
        "interruptions per 1k GPU-hours",
        "/1k GPU-h",
        floor=0.0,
    ),
    Metric("ckpt_write_gb_per_s", "ckpt write", "checkpoint write GB/s", "GB/s", floor=0.0),
    Metric("spend_usd", "spend", "spend (USD)", unit="usd"),
    Metric("rl_reward", "reward", "RL reward (mean)", "mean", rl=True),
    Metric("rl_entropy", "entropy", "RL entropy", rl=True),
    Metric(
        "rl_staleness", "staleness", "RL max staleness (steps)", unit="steps", floor=0.0, rl=True
    ),
    Metric(
        "rl_filtered_frac",
        "DAPO drop",
        "RL filtered group fraction",
        "dyn.sample",
        "fraction",
        0.0,
        rl=True,
    ),
    Metric(
        "rl_ess", "ESS", "RL effective sample size fraction", unit="fraction", floor=0.0, rl=True
    ),
)
"""Every metric, in the telemetry panel's order."""

BY_KEY: Mapping[str, Metric] = MappingProxyType({m.key: m for m in METRICS})
"""`METRICS` by key."""
