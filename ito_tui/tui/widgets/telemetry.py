"""The telemetry panel: one labelled sparkline per metric, fed by bounded series.

`TelemetryCharts` (plain Python, no widgets) reads the run's `state.TelemetryBank` (a
bounded `TelemetrySeries` per metric); `TelemetryPanel` draws the metrics that matter for
the current stage. A chart only asks its series for a view when it is painted, so a hidden
panel costs nothing, and memory stays bounded whatever the run's length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from ito_tui.contract import TelemetrySample
from ito_tui.format import fixed, percent, special
from ito_tui.state import TelemetryBank
from ito_tui.tui.format import usd_short

from .sparkline import ChartData, TextSparkline, default_format

WINDOWS: tuple[tuple[str, float | None], ...] = (("15 min", 900.0), ("6 h", 21600.0), ("run", None))
"""Time windows the window key cycles through (label, seconds or None for the whole run)."""

RL_STAGES = frozenset({"rlvr"})
LOSS_LABELS = {"sft": "SFT loss", "dpo": "DPO loss", "rlvr": "RL loss"}


# `–` is "no sample yet"; NaN, ±inf and huge values are written by `ito_tui.format`.


def _pct(v: float | None) -> str:
    return "–" if v is None else percent(v, 1)


def _gib(v: float | None) -> str:
    return "–" if v is None else f"{special(v) or f'{v:.0f}'} GiB"


def _usd(v: float | None) -> str:
    if v is None:
        return "–"
    text = special(v)
    return f"${text}" if text else f"${v:,.0f}" if v >= 100 else f"${v:,.2f}"


def _steps(v: float | None) -> str:
    return "–" if v is None else f"{special(v) or f'{v:.0f}'} st"


@dataclass(frozen=True)
class Metric:
    """One chart: which `TelemetryBank` series, how to label and format it."""

    key: str
    label: str
    sublabel: str = ""
    fmt: Callable[[float | None], str] = default_format
    floor: float | None = None
    rl: bool = False
    compact: Callable[[float | None], str] | None = None
    """A shorter `fmt` for a narrow stats column (`$5.0–$8.5K` for `$5,000–$8,500`)."""


METRICS: tuple[Metric, ...] = (
    Metric("loss", "loss"),
    Metric("goodput", "goodput", "ML prod.", _pct, 0.0),
    Metric("goodput_runtime", "goodput", "runtime", _pct, 0.0),
    Metric("tokens_per_s_per_gpu", "tok/s/GPU"),
    Metric("mfu", "MFU", "", _pct, 0.0),
    Metric("mem_gib", "memory", "per GPU", _gib, 0.0),
    Metric("interruptions_per_1k", "interrupts", "/1k GPU-h", floor=0.0),
    Metric("ckpt_write_gb_per_s", "ckpt write", "GB/s", floor=0.0),
    Metric("spend_usd", "spend", "", _usd, compact=usd_short),
    Metric("rl_reward", "reward", "mean", rl=True),
    Metric("rl_entropy", "entropy", rl=True),
    Metric("rl_staleness", "staleness", "", _steps, 0.0, rl=True),
    Metric("rl_filtered_frac", "DAPO drop", "dyn.sample", _pct, 0.0, rl=True),
    Metric("rl_ess", "ESS", "", _pct, 0.0, rl=True),
)


class TelemetryCharts:
    """Turns a `state.TelemetryBank` into chart data, plus what the labels need (HBM, fp8)."""

    def __init__(self, bank: TelemetryBank) -> None:
        self.bank = bank
        self.hbm_gib: float | None = None
        self.fp8 = False
        self.staleness_bound: int | None = None
        """The trainer/rollout staleness bound of RLVR (shown next to the staleness)."""

    def ingest_backfill(self, samples: Iterable[TelemetrySample]) -> None:
        """Append a `GET /telemetry` page, oldest first, skipping what the bank has."""
        last_x = self.bank["loss"].last_x
        for sample in sorted(samples, key=lambda s: s.seq):
            x = sample.ts.timestamp()
            if last_x is None or x > last_x:
                self.bank.ingest(sample, x)

    @property
    def rewind_count(self) -> int:
        return sum(1 for _x, label in self.bank["loss"].markers if label.startswith("rewind"))

    def chart(self, key: str, width: int, window: float | None) -> ChartData:
        """The `key` series bucketed to `width` columns over the last `window` seconds."""
        series = self.bank[key]
        view = series.view(width, window)
        note = None
        if key == "mfu" and self.fp8 and series.last is None:
            note = "n/a (fp8)"
        return ChartData(
            lows=[None if c is None else c.min for c in view.columns],
            highs=[None if c is None else c.max for c in view.columns],
            odd=[0 if c is None else c.odd for c in view.columns],
            value=view.last,
            vmin=view.min,
            vmax=view.max,
            markers=[col for col, label in view.markers if label.startswith("rewind")],
            note=note,
        )


class TelemetryPanel(VerticalScroll):
    """Sparklines for the metrics of the current stage; RLVR adds the async-RL metrics."""

    DEFAULT_CSS = """
    TelemetryPanel { height: 1fr; }
    TelemetryPanel > #telemetry-caption { height: 1; width: 1fr; color: $text-muted; padding: 0 1; }
    TelemetryPanel > TextSparkline { height: 2; padding: 0 1; }
    TelemetryPanel > TextSparkline.-rl { display: none; }
    TelemetryPanel.-rl > TextSparkline.-rl { display: block; }
    """

    version: reactive[int] = reactive(0, repaint=False)
    """Bump after new samples: every visible chart re-reads its series (the panel itself
    is not repainted: that would rewrite its whole region, blank rows included)."""
    window_index: reactive[int] = reactive(0, repaint=False)
    """Index into `WINDOWS` (the charts and the caption repaint themselves, not the panel)."""
    stage: reactive[str | None] = reactive(None)
    """The current stage (RLVR shows RL metrics; SFT/DPO relabel the loss)."""

    def __init__(self, charts: TelemetryCharts, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.charts = charts
        self._caption_text = ""
        self._sparks: dict[str, TextSparkline] = {}
        """The charts by metric key, in `METRICS` order."""

    @property
    def window(self) -> float | None:
        return WINDOWS[self.window_index][1]

    def compose(self) -> ComposeResult:
        yield Static(id="telemetry-caption", markup=False)
        # Kept: a redraw per telemetry event walks them (a DOM query each time cost ~0.1 ms).
        self._sparks = {
            metric.key: TextSparkline(
                metric.label,
                self._source(metric.key),
                sublabel=metric.sublabel,
                fmt=metric.fmt,
                compact=metric.compact,
                floor=metric.floor,
                id=f"spark-{metric.key}",
                classes="-rl" if metric.rl else "",
            )
            for metric in METRICS
        }
        yield from self._sparks.values()

    def _source(self, key: str) -> Callable[[int], ChartData]:
        return lambda width: self.charts.chart(key, width, self.window)

    def on_mount(self) -> None:
        self._caption()

    def _caption(self) -> None:
        label = WINDOWS[self.window_index][0]
        rewinds = self.charts.rewind_count
        note = f" · ↶ {rewinds} rewind{'s' if rewinds != 1 else ''}" if rewinds else ""
        text = f"window: {label} (w cycles){note}"
        if text != self._caption_text:
            # The caption's box is one row of fixed width (CSS): new text never needs a
            # layout, which would reflow the whole screen on every `w` and chart flush.
            self._caption_text = text
            self.query_one("#telemetry-caption", Static).update(text, layout=False)

    def cycle_window(self) -> None:
        self.window_index = (self.window_index + 1) % len(WINDOWS)

    def watch_window_index(self) -> None:
        self._redraw()

    def watch_version(self) -> None:
        self._redraw()

    def watch_stage(self, stage: str | None) -> None:
        self.set_class(stage in RL_STAGES, "-rl")
        if "loss" in self._sparks:
            chart = self._sparks["loss"]
            chart.label = LOSS_LABELS.get(stage or "", "loss")
            chart.refresh()

    def _redraw(self) -> None:
        if not self.is_mounted:
            return
        self._caption()
        hbm = self.charts.hbm_gib
        self._sparks["mem_gib"].sublabel = f"of {fixed(hbm, 0)} GiB" if hbm else "per GPU"
        bound = self.charts.staleness_bound
        stale = self._sparks["rl_staleness"]
        stale.sublabel = f"bound {bound}" if bound is not None else ""
        for chart in self._sparks.values():
            if chart.display:
                chart.refresh_if_changed()
