"""`TelemetryBank`: one bounded `TelemetrySeries` per metric of the telemetry samples."""

from __future__ import annotations

from ito_tui.contract import TelemetrySample
from ito_tui.format import to_float

from .metrics import METRICS
from .telemetry import TelemetrySeries

__all__ = ["TelemetryBank"]


class TelemetryBank:
    """A `TelemetrySeries` per metric of `metrics.METRICS`, keyed by x = the sample's `ts`
    in seconds.

    Live events and `GET /telemetry` backfills must use the same x (the default),
    or the series would see its x jump between two clocks.
    """

    def __init__(self) -> None:
        self.series: dict[str, TelemetrySeries] = {m.key: TelemetrySeries(m.key) for m in METRICS}
        self.samples = 0

    def __getitem__(self, metric: str) -> TelemetrySeries:
        return self.series[metric]

    def __contains__(self, metric: object) -> bool:
        return metric in self.series and self.series[str(metric)].count > 0

    def ingest(self, sample: TelemetrySample, x: float | None = None) -> None:
        """Append every metric of `sample` at `x` (default: the sample's `ts` in seconds).

        A null metric is a gap; NaN and ±inf are samples the chart marks; an int beyond
        float range is stored as the largest float (`format.to_float`), never a crash.
        """
        if x is None:
            x = sample.ts.timestamp()
        s = self.series
        s["loss"].append(x, sample.loss)
        s["grad_norm"].append(x, sample.grad_norm)
        s["tokens_per_s_per_gpu"].append(x, sample.tokens_per_s_per_gpu)
        s["mfu"].append(x, sample.mfu_frac)
        s["mem_gib"].append(x, sample.mem_max_reserved_gib)
        s["goodput"].append(x, sample.goodput.ml_productivity_frac)
        s["goodput_runtime"].append(x, sample.goodput.runtime_frac)
        s["interruptions_per_1k"].append(x, sample.interruptions_per_1k_gpu_hours)
        s["ckpt_write_gb_per_s"].append(x, sample.checkpoint.write_gb_per_s)
        s["spend_usd"].append(x, to_float(sample.spend_usd))
        rl = sample.rl
        if rl is not None:
            s["rl_reward"].append(x, rl.reward_mean)
            s["rl_entropy"].append(x, rl.entropy)
            s["rl_staleness"].append(x, to_float(rl.max_staleness_steps))
            s["rl_filtered_frac"].append(x, rl.filtered_group_frac)
            s["rl_ess"].append(x, rl.ess_frac)
        self.samples += 1

    def add_marker(self, x: float, label: str) -> None:
        """Mark `x` on every series (a rewind shows on every chart)."""
        for series in self.series.values():
            series.add_marker(x, label)

    def nbytes(self) -> int:
        return sum(s.nbytes() for s in self.series.values())
