"""`TelemetryBank`: one bounded `TelemetrySeries` per metric of the telemetry samples.

Besides the fixed metrics (`metrics.METRICS`), the bank keeps the open ones a sample
carries in `metrics{}` (API.md v1.1, torchtitan's names: `loss_metrics/global_avg_loss`,
`mfu(%)`, `lr`, …), one series per name, first come first kept up to `MAX_OPEN_METRICS`
names (a backend inventing a name per sample cannot grow memory: further names are
counted, not stored). NaN, ±Infinity and null are data: a non-finite value is a sample
the chart marks, null a gap; `metric_last` keeps the newest as sent (None for null).
"""

from __future__ import annotations

from ito_tui.contract import TelemetrySample
from ito_tui.format import to_float

from .inspect_ref import RefCache
from .metrics import METRICS
from .pace import Pace
from .telemetry import TelemetrySeries

__all__ = ["HIDDEN", "MAX_NAME_LEN", "MAX_OPEN_METRICS", "OPEN_RAW", "TelemetryBank"]

HIDDEN = ("step", "tokens_seen")
"""The bank's hidden series (`TelemetryBank.hidden`)."""

MAX_OPEN_METRICS = 64
"""Open metric names stored per run (torchtitan logs about fifteen; RLVR a few more)."""
OPEN_RAW = 1024
"""Raw samples an open metric's series keeps before folding into buckets (a quarter of a
fixed metric's: 64 of them stay within ~10 MB whatever the run's length)."""
MAX_NAME_LEN = 200
"""A longer name is refused (counted), not stored."""
_MAX_REFUSED = 1024


class TelemetryBank:
    """A `TelemetrySeries` per metric of `metrics.METRICS`, keyed by x = the sample's `ts`
    in seconds.

    Live events and `GET /telemetry` backfills must use the same x (the default),
    or the series would see its x jump between two clocks.
    """

    def __init__(self, *, max_open: int = MAX_OPEN_METRICS) -> None:
        self.series: dict[str, TelemetrySeries] = {m.key: TelemetrySeries(m.key) for m in METRICS}
        self.hidden: dict[str, TelemetrySeries] = {k: TelemetrySeries(k) for k in HIDDEN}
        """Our `step` and `tokens_seen` per sample, on the same x: what a reference is
        aligned by on the charts (`inspect_ref`). Never charted, never in the picker."""
        self.open: dict[str, TelemetrySeries] = {}
        """The open metrics' series by their name as sent (first come, at most `max_open`)."""
        self.max_open = max_open
        self._open_last: dict[str, float | None] = {}
        self._refused: set[str] = set()
        self.refused_overflow = 0
        """Samples of refused names past the `_MAX_REFUSED` names remembered."""
        self.stage: str | None = None
        """The newest sample's stage."""
        self.stage_since: float | None = None
        """The x of that stage's first sample here (steps count from 0 in each stage)."""
        self.ref_cache = RefCache()
        """A reference run's overlays as last drawn on this bank's charts (`inspect_ref`)."""
        self.pace = Pace()
        """The current stage's measured step and spend on the run's clock (`projection`):
        fed by `RunTracker.feed` from live events (their `sim_ts`), not by `ingest` (a
        sample's own `ts` may be another clock: desk_sim's is the wall clock)."""
        self.samples = 0

    def __getitem__(self, metric: str) -> TelemetrySeries:
        """A fixed metric's series by key, else an open metric's by name (KeyError)."""
        series = self.series.get(metric)
        return series if series is not None else self.open[metric]

    def __contains__(self, metric: object) -> bool:
        key = str(metric)
        series = self.series.get(key) or self.open.get(key)
        return series is not None and series.count > 0

    def metric_names(self) -> list[str]:
        """The open metrics' names, sorted (as sent: render them with `textsafe`)."""
        return sorted(self.open)

    def metric_last(self, name: str) -> float | None:
        """The newest value sent for open metric `name`: NaN and ±inf as sent, None for a
        null (or a name never seen)."""
        return self._open_last.get(name)

    @property
    def refused_names(self) -> int:
        """Distinct open metric names not stored (past `max_open`, or too long)."""
        return len(self._refused)

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
        # Money is a finite Decimal of bounded digits (the contract), so float() is exact
        # enough and never inf; format.to_float's range check of a Decimal (compared with
        # float_info.max) cost ~10 µs, a fifth of `feed` per sample. Guarded all the same.
        spend = float(sample.spend_usd)
        if spend - spend != 0.0:
            spend = to_float(sample.spend_usd)
        s["spend_usd"].append(x, spend)
        stage = str(sample.stage)
        if stage != self.stage:
            self.stage, self.stage_since = stage, x
        h = self.hidden
        h["step"].append(x, to_float(sample.step))
        h["tokens_seen"].append(x, to_float(sample.tokens_seen))
        rl = sample.rl
        if rl is not None:
            s["rl_reward"].append(x, rl.reward_mean)
            s["rl_entropy"].append(x, rl.entropy)
            s["rl_staleness"].append(x, to_float(rl.max_staleness_steps))
            s["rl_filtered_frac"].append(x, rl.filtered_group_frac)
            s["rl_ess"].append(x, rl.ess_frac)
        if sample.metrics:
            self._ingest_open(x, sample.metrics)
        self.samples += 1

    def _ingest_open(self, x: float, metrics: dict[str, float | None]) -> None:
        opened, last = self.open, self._open_last
        for name, value in metrics.items():
            series = opened.get(name)
            if series is None:
                if len(opened) >= self.max_open or len(name) > MAX_NAME_LEN or not name:
                    self._refuse(name)
                    continue
                series = opened[name] = TelemetrySeries(name, raw=OPEN_RAW)
                # Markers put on every chart before this name appeared are on it too.
                for at, label in self.series["loss"].markers:
                    series.add_marker(at, label)
            series.append(x, value)
            last[name] = value

    def _refuse(self, name: str) -> None:
        if name[:MAX_NAME_LEN] in self._refused:
            return
        if len(self._refused) < _MAX_REFUSED:
            self._refused.add(name[:MAX_NAME_LEN])
        else:
            self.refused_overflow += 1

    def add_marker(self, x: float, label: str) -> None:
        """Mark `x` on every series (a rewind shows on every chart)."""
        for series in self.series.values():
            series.add_marker(x, label)
        for series in self.open.values():
            series.add_marker(x, label)

    def nbytes(self) -> int:
        every = (*self.series.values(), *self.hidden.values(), *self.open.values())
        return sum(s.nbytes() for s in every)
