"""`projection(...)`: when will the run finish and what will it have cost — p50 and p90 from
what the run has MEASURED so far (its throughput and its goodput), not from the pre-flight
estimate.

The current stage's pace (`bank.pace`: step and spend on the run's clock, from live
events) is cut into intervals between samples. One much slower than the stage's median
(`STALL_FACTOR`), not one of a run of slow ones, was interrupted — a fault, a restart, a
checkpoint stall, a rollback's lost time: its time beyond the median pace is badput,
counted over the whole stage (an interruption of an hour ago still says how often they
come). The rest is the running pace, recent intervals weighing more (`HALF_LIFE`: a node
throttling now, or a run of slow intervals, is the pace to come). The p50 is the steps
left at the running pace over the goodput; the p90 adds 1.28 standard deviations of the
running time (how much the pace varied, how much of it was measured) and of the
interruptions (a Poisson process at the rate seen, the rate itself known only as well as
that many events tell). Stages still to come take the estimate's wall-clock hours, scaled
by how the measured pace compares with the estimate's for this stage, with this stage's
p90/p50 spread. Spend grows at the measured dollars per second for as long as that.

`late`: the p90 finish is past the booking's end; `over`: the p90 spend is past the
budget. Words through `ito_tui.format`: `finish ~Dec 3 14:20 UTC (p90 Dec 4 02:00 UTC)
· spend ~$28.1K (p90 $31.0K)`. Pure: no clock is read (`now` is the run's clock).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from operator import mul, sub, truediv
from typing import TYPE_CHECKING, NamedTuple

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
HALF_LIFE = 0.1
"""A running interval's weight halves every tenth of the measured span back from now."""
STALL_FACTOR = 3.0
"""An interval this many times slower than the stage's median pace was interrupted..."""
PACE_CHANGE_RUN = 3
"""... unless it is one of this many slow intervals in a row: then the pace changed."""
MAX_BADPUT = 0.95
"""Badput beyond this is taken as this (a run that almost never progresses still has a
finite, if distant, projection; past `MAX_HORIZON_S` it is "not in sight")."""
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
    goodput_frac: float | None = None
    """The measured fraction of the stage's time that made progress (interruptions,
    stalls and rollbacks are the rest)."""

    @property
    def known(self) -> bool:
        return self.remaining_s_p50 is not None


def _unknown(stage: str | None, words: str, measured_s: float = 0.0) -> Projection:
    return Projection(
        stage, None, None, None, None, None, None, False, False, measured_s, words, ""
    )


MAX_STEP_DELTA = 2**53
"""The largest step delta measured: beyond it a float no longer holds every integer."""


class _Intervals(NamedTuple):
    """The intervals between measured points that made progress, as columns (each pass
    over them is then a `map` of an operator, not a Python loop: this runs at every
    telemetry event, over up to `pace.CAP` points)."""

    dt: list[float]
    """Seconds each took."""
    dw: list[int]
    """Steps each made."""
    end: list[float]
    """x at its end."""


def _intervals(points: list[PacePoint], now_x: float) -> tuple[_Intervals, float]:
    """The intervals between measured points, each with progress, and their usual length
    (the median). Time with none (a stall, a rollback: steps going back count as none)
    joins the next interval that has some; a stall still going on at `now_x` joins the
    last one, for the time beyond the usual length. The run's clock runs ahead of the
    last point by up to one interval as a matter of course (an event of the next quantum
    heard before its progress): counted whole, that doubled the last interval, and the
    demo's finish jumped by days and back at every quantum."""
    xs = [p.x for p in points]
    steps = [p.step for p in points]
    dts = list(map(sub, xs[1:], xs))
    dws = list(map(sub, steps[1:], steps))
    # A step count past 2**53 (legal on the wire: an int) is no pace to measure: as a
    # float it is inexact, past ~1e308 it is not one at all (OverflowError).
    dt_acc = 0.0
    if (
        dts
        and min(dts) > 0.0
        and math.isfinite(sum(dts))
        and 0 < min(dws) <= max(dws) <= MAX_STEP_DELTA
    ):
        # Every interval took time and made progress (a stage running): each is one.
        iv = _Intervals(dts, dws, xs[1:])
    else:
        iv = _Intervals([], [], [])
        for dt, dw, x in zip(dts, dws, xs[1:], strict=True):
            dt_acc += max(0.0, dt)
            if 0 < dw <= MAX_STEP_DELTA:
                iv.dt.append(dt_acc)
                iv.dw.append(dw)
                iv.end.append(x)
                dt_acc = 0.0
    n = len(iv.dt)
    usual = sorted(iv.dt)[n // 2] if n else 0.0
    if n:
        dt_acc += max(0.0, now_x - xs[-1] - usual)
        if dt_acc > 0:
            iv.dt[-1] += dt_acc
            iv.end[-1] = now_x
    return iv, usual


class _Pace(NamedTuple):
    """The measured pace: throughput while running, goodput, and how sure each is."""

    tau: float
    """Seconds a step takes while running (recent intervals weigh more)."""
    goodput: float
    """The fraction of the stage's time that made progress at that pace (1 − badput)."""
    run_var: float
    """Variance of a running interval's seconds a step."""
    n_eff: float
    """How many intervals' worth the (weighted) running pace was measured over."""
    mean_w: float
    """Steps an interval makes."""
    rate: float
    """Interruptions a second (their excess time counted as badput)."""
    size2: float
    """Mean square of an interruption's excess seconds."""
    interruptions: int


def _weighted_median(values: list[float], weights: list[float]) -> float:
    pairs = sorted(zip(values, weights, strict=True))
    half, acc = sum(weights) / 2, 0.0
    for value, weight in pairs:
        acc += weight
        if acc >= half:
            return value
    return pairs[-1][0]


def _measure(iv: _Intervals, now_x: float, span: float) -> _Pace:
    """Split what was measured into throughput and goodput (see the module docstring).

    An interval slower than `STALL_FACTOR` × the stage's median pace was interrupted (a
    fault, a restart, a checkpoint stall, a rollback's lost time): its time beyond the
    median pace is badput, counted over the whole stage, so an interruption of an hour ago
    still says how often they come. The running pace weighs recent intervals more
    (half-life `HALF_LIFE` of the span): a node throttling now is the pace to come."""
    half = max(HALF_LIFE * span, 1e-9)
    decay = [0.5 ** ((now_x - end) / half) for end in iv.end]
    taus = list(map(truediv, iv.dt, iv.dw))
    weights = list(map(mul, decay, iv.dw))
    # The typical pace over the whole stage (by steps, not by recency): a stall going on
    # now is the newest interval, and must not become the yardstick it is judged by.
    median = _weighted_median(taus, list(map(float, iv.dw)))
    limit = STALL_FACTOR * median
    run_dt, run_tau = iv.dt, taus
    excess: list[float] = []
    if any(map(limit.__lt__, taus)):  # some tau > limit: maybe an interruption
        run_dt = []
        for dt, dw, stalled in zip(iv.dt, iv.dw, _interrupted(taus, limit), strict=True):
            if stalled:
                run_dt.append(dw * median)
                excess.append(dt - dw * median)
            else:
                run_dt.append(dt)
        run_tau = list(map(truediv, run_dt, iv.dw))
    work = sum(weights)
    tau_run = sum(map(mul, decay, run_dt)) / work
    var = sum(v * (tau - tau_run) ** 2 for v, tau in zip(weights, run_tau, strict=True))
    total = sum(iv.dt)
    badput = min(MAX_BADPUT, sum(excess) / total) if total > 0 else 0.0
    return _Pace(
        tau=tau_run,
        goodput=1.0 - badput,
        run_var=var / work,
        n_eff=work**2 / sum(map(mul, weights, weights)),
        mean_w=work / sum(decay),
        rate=len(excess) / total if total > 0 else 0.0,
        size2=sum(e * e for e in excess) / len(excess) if excess else 0.0,
        interruptions=len(excess),
    )


def _interrupted(taus: list[float], limit: float) -> list[bool]:
    """Which intervals were interrupted: slower than `limit`, but not in a run of
    `PACE_CHANGE_RUN` or more slow ones in a row. An interruption is one long gap (no
    samples while the run is down); many slow intervals that each made progress are a
    pace that changed (a node throttling), which the running pace takes up."""
    slow = [tau > limit for tau in taus]
    out = list(slow)
    i = 0
    while i < len(slow):
        if not slow[i]:
            i += 1
            continue
        j = i
        while j < len(slow) and slow[j]:
            j += 1
        if j - i >= PACE_CHANGE_RUN:
            out[i:j] = [False] * (j - i)
        i = j
    return out


def _remaining_s(pace: _Pace, steps_left: int) -> tuple[float, float]:
    """p50 and p90 seconds for `steps_left` more steps: running at the measured pace,
    interrupted as often and as long as so far."""
    running = steps_left * pace.tau
    p50 = running / pace.goodput
    future = steps_left / pace.mean_w
    var = future * pace.mean_w**2 * pace.run_var + steps_left**2 * pace.run_var / pace.n_eff
    if pace.interruptions:
        # Interruptions as a Poisson process over the time to come, and the rate itself
        # known only as well as `interruptions` events measure it.
        count = pace.rate * p50
        var += count * pace.size2 + (p50 - running) ** 2 / pace.interruptions
    return p50, p50 + Z90 * math.sqrt(var)


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
    intervals, usual = _intervals(points, now_x)
    # What is left is counted from the last point while the next is not yet due (no news
    # is not a stall), from `now_x` less the usual interval once it is overdue.
    lead = min(usual, now_x - points[-1].x)
    anchor = datetime.fromtimestamp(now_x - lead, tz=now.tzinfo)
    measured_s = now_x - points[0].x
    if len(intervals.dt) < MIN_INTERVALS:
        return _unknown(stage, f"finish {MISSING} (measuring the pace)", measured_s)
    step = max(p.step, points[-1].step)
    steps_left = max(0, p.total_steps - step)
    pace_now = _measure(intervals, now_x, measured_s)
    tau = pace_now.tau / pace_now.goodput  # seconds a step, interruptions included
    r50, r90 = _remaining_s(pace_now, steps_left)
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
        return anchor + timedelta(seconds=max(r, lead)) if r <= MAX_HORIZON_S else None

    f50, f90 = finish(r50), finish(r90)
    s50 = _cents(base + rate * max(0.0, r50 - lead)) if math.isfinite(base + rate * r50) else None
    s90 = _cents(base + rate * max(0.0, r90 - lead)) if math.isfinite(base + rate * r90) else None
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
        pace_now.goodput,
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
        finish = f"finish ~{when(f50, now, seconds=False)} (p90 {when(f90, now, seconds=False)})"
        if r50 < 1:
            finish = f"finish ~{when(f50, now, seconds=False)}"
    spend = f"spend ~{usd_compact(s50)} (p90 {usd_compact(s90)})"
    return f"{finish} · {spend}"
