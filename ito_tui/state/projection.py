"""`projection(...)`: when will the run finish and what will it have cost — p50 and p90 from
what the run has MEASURED so far, not from the pre-flight estimate.

The current stage's pace (`bank.pace`: step and spend over the run's clock, every
interruption, checkpoint stall, rollback and slow node included, so it is the goodput
the run really had) gives the time a step takes, interval by interval, recent ones
weighing more (an interval's weight halves every quarter of the measured span back from
now: a pace that changed is the pace to come, an old stall fades). The remaining steps
at that mean are the p50; the p90 adds 1.28 standard deviations of the sum of
that many future intervals (how much the pace varied) and of the mean itself (how
much of it was measured). Stages still to come after this one take the estimate's
wall-clock hours, scaled by how the measured pace compares with the estimate's for
this stage. Spend grows at the measured dollars per second for as long as that.

`late`: the p90 finish is past the booking's end; `over`: the p90 spend is past the
budget. Words through `ito_tui.format`: `finish ~Dec 3 14:20 UTC (p90 Dec 4 02:00 UTC)
· spend ~$28.1K (p90 $31.0K)`. Pure: no clock is read (`now` is the run's clock).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from typing import TYPE_CHECKING

from ito_tui.format import MISSING, duration, usd_compact, when

from .pace import PacePoint

if TYPE_CHECKING:
    from .bank import TelemetryBank
    from .run import RunState

__all__ = ["MAX_HORIZON_S", "Z90", "Projection", "projection"]

Z90 = 1.2816
"""The 90th percentile of a standard normal."""
MAX_HORIZON_S = 3650 * 86_400.0
"""A finish further than ten years away is "not in sight": no date is made up."""
MIN_INTERVALS = 2
HALF_LIFE = 0.25
"""An interval's weight halves every quarter of the measured span back from now."""
"""Intervals with progress needed before a projection is made."""
WARN_LATE = "⚠ p90 past booking end"
WARN_OVER = "⚠ p90 over budget"


@dataclass(frozen=True, slots=True)
class Projection:
    """A run's projected finish and final spend (None where nothing can be said)."""

    stage: str | None
    finish_p50: datetime | None
    finish_p90: datetime | None
    spend_p50: Decimal | None
    spend_p90: Decimal | None
    remaining_s_p50: float | None
    remaining_s_p90: float | None
    late: bool
    """The p90 finish is after the booking's end (or not in sight while one is set)."""
    over: bool
    """The p90 spend is over the budget."""
    measured_s: float
    """Seconds of the run's clock the pace was measured over."""
    words: str
    """`finish ~… (p90 …) · spend ~… (p90 …)`, or why there is no projection yet."""
    warning: str
    """`⚠ p90 past booking end`, `⚠ p90 over budget`, both joined by ` · `, or ""."""
    booking_ends_at: datetime | None = None
    """What `late` was judged against."""
    budget_usd: Decimal | None = None
    """What `over` was judged against."""
    stage_remaining_s: float | None = None
    """The p50 seconds left of the current stage alone (the rest are later stages)."""

    @property
    def known(self) -> bool:
        return self.remaining_s_p50 is not None


def _unknown(stage: str | None, words: str, measured_s: float = 0.0) -> Projection:
    return Projection(
        stage, None, None, None, None, None, None, False, False, measured_s, words, ""
    )


def _intervals(points: list[PacePoint], now_x: float) -> list[tuple[float, int, float]]:
    """(seconds, steps, x at its end) between measured points, each with progress: time
    with none (a stall, a rollback: steps going back count as none) joins the next
    interval that has some; a stall still going on at `now_x` joins the last one."""
    out: list[tuple[float, int, float]] = []
    dt_acc = 0.0
    for a, b in pairwise(points):
        dt_acc += max(0.0, b.x - a.x)
        dw = b.step - a.step
        if dw > 0:
            out.append((dt_acc, dw, b.x))
            dt_acc = 0.0
    dt_acc += max(0.0, now_x - points[-1].x) if points else 0.0
    if out and dt_acc > 0:
        dt, dw, _ = out[-1]
        out[-1] = (dt + dt_acc, dw, now_x)
    return out


def _remaining_s(
    intervals: list[tuple[float, int, float]], steps_left: int, now_x: float, span: float
) -> tuple[float, float, float]:
    """p50 and p90 seconds for `steps_left` more steps at the measured pace, and the
    seconds a step takes (the p50's pace).

    Recent intervals weigh more (half-life `HALF_LIFE` of the measured span): a pace
    that changed (a node throttling, a squeeze) is the pace to come, and an old stall
    fades, while the p90 widens by as much as the weighting leaves less measured."""
    half = max(HALF_LIFE * span, 1e-9)
    decay = [0.5 ** ((now_x - end) / half) for _, _, end in intervals]
    time = sum(a * dt for a, (dt, _, _) in zip(decay, intervals, strict=True))
    work = sum(a * dw for a, (_, dw, _) in zip(decay, intervals, strict=True))
    tau = time / work  # seconds a step
    weights = [a * dw for a, (_, dw, _) in zip(decay, intervals, strict=True)]
    var = (
        sum(v * (dt / dw - tau) ** 2 for v, (dt, dw, _) in zip(weights, intervals, strict=True))
        / work
    )
    n_eff = work**2 / sum(v * v for v in weights)
    mean_w = work / sum(decay)
    future = steps_left / mean_w
    sd = math.sqrt(future * mean_w**2 * var + steps_left**2 * var / n_eff)
    p50 = steps_left * tau
    return p50, p50 + Z90 * sd, tau


def _later_stages_s(state: RunState, stage: str, measured_stage_s: float | None) -> float:
    """The estimate's wall-clock seconds of the stages still to come after `stage`,
    scaled by measured / estimated time of `stage` (1 when either is unknown)."""
    est = state.estimate
    if est is None or not est.stages:
        return 0.0
    names = [str(s.stage) for s in est.stages]
    if stage not in names:
        return 0.0
    this = est.stages[names.index(stage)].wall_clock_h * 3600
    scale = measured_stage_s / this if measured_stage_s and this > 0 else 1.0
    later = 0.0
    for s in est.stages[names.index(stage) + 1 :]:
        st = state.stage(str(s.stage))
        if st is None or str(st.state) == "pending":
            later += s.wall_clock_h * 3600
    return later * scale if math.isfinite(scale) else later


def _cents(value: float) -> Decimal:
    return Decimal(str(round(value, 2)))


def projection(
    state: RunState,
    bank: TelemetryBank,
    *,
    booking_ends_at: datetime | None,
    budget_usd: Decimal | None,
    now: datetime,
) -> Projection:
    """The projection of `state`'s run at `now` (the run's clock: the latest `sim_ts`)."""
    stage = state.current_stage
    if state.terminal:
        return _unknown(stage, "")
    pace = bank.pace
    points = pace.points() if pace.stage == stage else []
    st = state.stage(stage) if stage is not None else None
    p = st.progress if st is not None else None
    if stage is None or p is None or not p.total_steps or len(points) < 2:
        return _unknown(stage, f"finish {MISSING} (measuring the pace)")
    now_x = max(now.timestamp(), points[-1].x)
    anchor = datetime.fromtimestamp(now_x, tz=now.tzinfo)
    intervals = _intervals(points, now_x)
    measured_s = now_x - points[0].x
    if len(intervals) < MIN_INTERVALS:
        return _unknown(stage, f"finish {MISSING} (measuring the pace)", measured_s)
    step = max(p.step, points[-1].step)
    steps_left = max(0, p.total_steps - step)
    r50, r90, tau = _remaining_s(intervals, steps_left, now_x, measured_s)
    later = _later_stages_s(state, stage, tau * p.total_steps)
    stage_r50 = r50
    # Later stages are as uncertain as this one: their p90 keeps this stage's p90/p50.
    spread = r90 / r50 if r50 > 0 else 1.0
    r50 += later
    r90 += later * spread
    # Dollars a second over the measured span (spend is paid for the GPUs held, whatever
    # they did), from the spend known now.
    first, last = points[0], points[-1]
    span = last.x - first.x
    rate = (last.spend - first.spend) / span if span > 0 else 0.0
    spent = state.usd_spent
    base = float(spent) if spent is not None and spent.is_finite() else last.spend
    if not (math.isfinite(rate) and math.isfinite(base)):
        rate, base = math.nan, math.nan
    base += rate * (now_x - last.x)

    def finish(r: float) -> datetime | None:
        return anchor + timedelta(seconds=r) if r <= MAX_HORIZON_S else None

    f50, f90 = finish(r50), finish(r90)
    s50 = _cents(base + rate * r50) if math.isfinite(base + rate * r50) else None
    s90 = _cents(base + rate * r90) if math.isfinite(base + rate * r90) else None
    late = booking_ends_at is not None and (f90 is None or f90 > booking_ends_at)
    over = budget_usd is not None and s90 is not None and s90 > budget_usd
    words = _words(f50, f90, s50, s90, anchor, r50)
    warning = " · ".join(w for w, on in ((WARN_LATE, late), (WARN_OVER, over)) if on)
    return Projection(
        stage,
        f50,
        f90,
        s50,
        s90,
        r50,
        r90,
        late,
        over,
        measured_s,
        words,
        warning,
        booking_ends_at,
        budget_usd,
        stage_r50,
    )


def _words(
    f50: datetime | None,
    f90: datetime | None,
    s50: Decimal | None,
    s90: Decimal | None,
    now: datetime,
    r50: float,
) -> str:
    if f50 is None:
        finish = f"finish not in sight (over {duration(MAX_HORIZON_S)} at the measured pace)"
    else:
        finish = f"finish ~{when(f50, now)} (p90 {when(f90, now)})"
        if r50 < 1:
            finish = f"finish ~{when(f50, now)}"
    spend = f"spend ~{usd_compact(s50)} (p90 {usd_compact(s90)})"
    return f"{finish} · {spend}"
