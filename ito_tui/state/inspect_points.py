"""The inspector's data: one metric's real samples as `Point`s, events as `Mark`s, and a
bounded `Reference` run to draw beside them. Pure, no Textual.

A `Point` carries every x the inspector can draw on (step, tokens seen, time) with its
value, so changing the axis never refetches; NaN and ±inf are values like any other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Literal, NamedTuple

from ito_tui.contract import TelemetrySample
from ito_tui.format import to_float

from .buckets import kind_bit

__all__ = [
    "MAX_REF_KEYS",
    "MAX_REF_POINTS",
    "SMOOTHING",
    "Mark",
    "MarkKind",
    "Point",
    "Reference",
    "XAxis",
    "merge_points",
    "points_of",
    "thin",
    "x_of",
]

XAxis = Literal["step", "tokens", "time"]
"""What the inspector's x axis counts: training steps, tokens seen, or UTC time."""
AXES: tuple[XAxis, ...] = ("step", "tokens", "time")
SMOOTHING: tuple[float, ...] = (0.0, 0.6, 0.9, 0.99)
"""The EMA weights the smoothing key steps through (TensorBoard's slider, four stops)."""

MarkKind = Literal["rewind", "fault", "recovery", "checkpoint", "gate", "proposal"]
"""`views.MarkerKind` and a proposal (a rollback is a `rewind`)."""


class Point(NamedTuple):
    """One real sample's value of one metric."""

    seq: int
    step: int
    tokens: int
    ts: float
    """Epoch seconds (`sample.ts`), the clock the bank's charts use too."""
    value: float
    """NaN / ±inf allowed: data, marked, never scaled."""
    stage: str = ""
    """The sample's stage: steps count from 0 in each (tokens seen and time go on)."""


class Mark(NamedTuple):
    """An event on the x axis (a fault, a checkpoint, a rewind, a gate, a proposal)."""

    kind: MarkKind
    seq: int
    """The event's seq."""
    ts: float
    """Epoch seconds on the samples' clock (the newest sample's when the event came)."""
    step: int | None
    """The step it is about (the event's own when it names one), None when unknown."""
    tokens: int | None
    label: str
    """Our words and literal ids (never the backend's prose): render as plain text."""


def x_of(point: Point, axis: XAxis) -> float:
    """`point`'s x on `axis`."""
    if axis == "step":
        return to_float(point.step)
    if axis == "tokens":
        return to_float(point.tokens)
    return point.ts


def plot_column(x: float, x_lo: float, x_hi: float, width: int) -> int:
    """The column (0 … width - 1) of a finite `x` on a plot of [x_lo, x_hi], as
    `inspect_plot.bucket` counts; a zero-wide range is the last column. Computed in
    halves: a range across the whole float line is wider than the largest float."""
    if not x_hi > x_lo:
        return width - 1
    return max(0, min(width - 1, int((x / 2 - x_lo / 2) * (width / (x_hi / 2 - x_lo / 2)))))


_Getter = Callable[[TelemetrySample], object]


def _rl(name: str) -> _Getter:
    return lambda s: None if s.rl is None else getattr(s.rl, name)


_FIXED: Mapping[str, _Getter] = MappingProxyType(
    {
        "loss": lambda s: s.loss,
        "grad_norm": lambda s: s.grad_norm,
        "goodput": lambda s: s.goodput.ml_productivity_frac,
        "goodput_runtime": lambda s: s.goodput.runtime_frac,
        "tokens_per_s_per_gpu": lambda s: s.tokens_per_s_per_gpu,
        "mfu": lambda s: s.mfu_frac,
        "mem_gib": lambda s: s.mem_max_reserved_gib,
        "interruptions_per_1k": lambda s: s.interruptions_per_1k_gpu_hours,
        "ckpt_write_gb_per_s": lambda s: s.checkpoint.write_gb_per_s,
        "spend_usd": lambda s: s.spend_usd,
        "rl_reward": _rl("reward_mean"),
        "rl_entropy": _rl("entropy"),
        "rl_staleness": _rl("max_staleness_steps"),
        "rl_filtered_frac": _rl("filtered_group_frac"),
        "rl_ess": _rl("ess_frac"),
    }
)
"""How each fixed chart key (`metrics.BY_KEY`) reads a sample, as `TelemetryBank.ingest`."""


def points_of(samples: Iterable[TelemetrySample], key: str) -> list[Point]:
    """The `key` values of `samples` (a fixed chart key, else an open metric's name as
    sent), in the samples' order; a null (or absent) value is a gap, not a point."""
    getter = _FIXED.get(key)
    out: list[Point] = []
    for s in samples:
        raw = getter(s) if getter is not None else s.metrics.get(key)
        if isinstance(raw, int | float | Decimal):
            value = to_float(raw)
            out.append(Point(s.seq, s.step, s.tokens_seen, s.ts.timestamp(), value, str(s.stage)))
    return out


def merge_points(*parts: Iterable[Point]) -> list[Point]:
    """The points of `parts` (a whole-run page, a zoomed page, the live tail), each seq
    once (the last part's wins), ordered by seq."""
    by_seq: dict[int, Point] = {}
    for part in parts:
        for p in part:
            by_seq[p.seq] = p
    return [by_seq[s] for s in sorted(by_seq)]


MAX_REF_POINTS = 2000
"""Points a `Reference` keeps per key (a whole-run page is ~2×width: plenty)."""
MAX_REF_KEYS = 96
"""Keys a `Reference` keeps (the fixed charts and the bank's open metrics fit)."""


def thin(points: Sequence[Point], limit: int = MAX_REF_POINTS) -> tuple[Point, ...]:
    """At most `limit` of `points` (ordered by seq): per chunk its lowest and highest finite
    value and its newest point, or a non-finite one instead when it holds any, so spikes
    and NaNs survive the thinning (never an average)."""
    ordered = sorted(points, key=lambda p: p.seq)
    if len(ordered) <= limit:
        return tuple(ordered)
    chunks = max(1, limit // 3)
    size = math.ceil(len(ordered) / chunks)
    kept: list[Point] = []
    for start in range(0, len(ordered), size):
        chunk = ordered[start : start + size]
        finite = [p for p in chunk if not kind_bit(p.value)]
        odd = next((p for p in chunk if kind_bit(p.value)), None)
        picked = {odd if odd is not None else chunk[-1]}
        if finite:
            picked.add(min(finite, key=lambda p: p.value))
            picked.add(max(finite, key=lambda p: p.value))
        kept.extend(sorted(picked, key=lambda p: p.seq))
    return tuple(kept[:limit])


@dataclass(frozen=True, slots=True)
class Reference:
    """Another run drawn beside this one: its points per chart key, bounded
    (`MAX_REF_POINTS` a key by `thin`, `MAX_REF_KEYS` keys), ordered by seq."""

    run_id: str
    label: str
    """How the legend names it, e.g. the run id or "previous happy run" (plain text)."""
    points: Mapping[str, tuple[Point, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        keys = list(self.points)[:MAX_REF_KEYS]
        bounded = {k: thin(self.points[k]) for k in keys}
        object.__setattr__(self, "points", MappingProxyType(bounded))

    @classmethod
    def of(
        cls, run_id: str, label: str, samples: Iterable[TelemetrySample], keys: Iterable[str]
    ) -> Reference:
        """A reference from a telemetry page (or pages) of that run, for `keys`."""
        page = list(samples)
        return cls(run_id, label, {k: tuple(points_of(page, k)) for k in keys})

    def get(self, key: str) -> tuple[Point, ...]:
        """The points of `key` (empty when the reference has none)."""
        return self.points.get(key, ())

    def __len__(self) -> int:
        return sum(len(p) for p in self.points.values())
