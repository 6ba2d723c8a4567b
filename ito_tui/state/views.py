"""Immutable views of a run, computed from `RunState` (and its `TelemetryBank`) alone.

Every screen draws these values and nothing else, so two panels showing the same fact
cannot disagree: `progress` is the one source of step, ETA and spend; `stage_views`
the one source of each stage's status; `chart_view` the one source of a chart's columns
and labels (resolved from the run: "SFT loss" in SFT, "of 80 GiB" once the plan is known).
Pure functions, no Textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Literal, get_args

from ito_tui.contract import STAGE_ORDER, Gate, PostTraining, Run, RunSummary, Stage
from ito_tui.describe import MFU_UNMEASURED, is_fp8
from ito_tui.format import fixed, integer, stage_label
from ito_tui.textsafe import one_line

from .inspect_ref import with_reference
from .metrics import BY_KEY, Unit
from .run import RunState
from .telemetry import SeriesView, TelemetrySeries

if TYPE_CHECKING:
    from .bank import TelemetryBank
    from .inspect_points import Reference, XAxis

__all__ = [
    "LOSS_LABELS",
    "UNDER_WAY",
    "ChartView",
    "Marker",
    "MarkerKind",
    "Progress",
    "StageView",
    "chart_view",
    "marker_kind",
    "open_chart_view",
    "progress",
    "progress_of_run",
    "skipped_by_spec",
    "stage_views",
]

MarkerKind = Literal["rewind", "fault", "recovery", "checkpoint", "gate"]
MARKER_KINDS: frozenset[str] = frozenset(get_args(MarkerKind))

UNDER_WAY = frozenset({"running", "paused", "recovering", "gate_eval"})
"""The stage statuses with an ETA (a stage over, or not begun, has none)."""

LOSS_LABELS = {"sft": "SFT loss", "dpo": "DPO loss", "rlvr": "RL loss"}
"""The loss chart's label in a post-training stage (pretraining's is "loss")."""

_POST_CHAIN = ("sft", "dpo", "rlvr")


@dataclass(frozen=True, slots=True)
class Marker:
    """A marked moment on a chart, at a column of it."""

    column: int
    kind: MarkerKind
    label: str


@dataclass(frozen=True, slots=True)
class ChartView:
    """What one chart draws: its columns over a window at a width, labels resolved."""

    key: str
    label: str
    sublabel: str
    unit: Unit
    floor: float | None
    lows: tuple[float | None, ...]
    highs: tuple[float | None, ...]
    odd: tuple[int, ...]
    """Per column, the non-finite kinds in it (`NAN_BIT | POS_INF_BIT | NEG_INF_BIT`)."""
    value: float | None
    """The series' newest value (NaN or ±inf too)."""
    vmin: float | None
    vmax: float | None
    markers: tuple[Marker, ...]
    note: str | None = None
    """Written instead of a value, e.g. "n/a (fp8)" for the MFU of an fp8 run."""
    ref_lows: tuple[float | None, ...] = ()
    """A reference run's band per column, aligned (`inspect_ref`); empty without one."""
    ref_highs: tuple[float | None, ...] = ()
    ref_value: float | None = None
    """The reference's value where this run is now (same tokens, step or time)."""
    ref_label: str | None = None
    """E.g. "run_abc (by tokens)"; None without a reference."""

    @property
    def width(self) -> int:
        return len(self.lows)


@dataclass(frozen=True, slots=True)
class StageView:
    """One pipeline stage as every screen shows it."""

    name: str
    status: str
    """pending | running | paused | recovering | gate_eval | passed | failed | skipped |
    cancelled"""
    stage: Stage | None
    step: int | None
    total_steps: int | None
    tokens: int | None
    total_tokens: int | None
    eta_s: float | None
    gate: Gate | None
    reason: str | None = None
    """Why a stage is `skipped` or `cancelled` ("post-training stops at SFT", "the
    mid-train gate failed", or the backend's own words: render literally)."""


@dataclass(frozen=True, slots=True)
class Progress:
    """The one source of step, ETA and spend for every screen (list, detail, header, modal)."""

    stage: str | None
    step: int | None
    total_steps: int | None
    eta_s: float | None
    usd_spent: Decimal | None
    budget_usd: Decimal | None
    state: str


def marker_kind(label: str) -> MarkerKind | None:
    """The kind of a bank marker, from its label's first word ("rewind 900→800")."""
    word = label.split(" ", 1)[0]
    return word if word in MARKER_KINDS else None  # type: ignore[return-value]


# ---------------------------------------------------------------- charts


def chart_view(
    state: RunState,
    bank: TelemetryBank,
    key: str,
    width: int,
    window_s: float | None,
    reference: Reference | None = None,
    by: XAxis = "tokens",
) -> ChartView:
    """The `key` chart `width` columns wide over the last `window_s` seconds (None: the run).

    `key` is a fixed metric's (`metrics.BY_KEY`) or else an open metric's name as the
    backend sent it (`TelemetryBank.metric_names()`): `open_chart_view`. A `reference`
    run's points of `key` are drawn on the same columns, aligned `by` tokens seen, step
    or time (`inspect_ref`); its values may lie outside `vmin`..`vmax` (ours).
    """
    metric = BY_KEY.get(key)
    if metric is None:
        return with_reference(
            open_chart_view(bank, key, width, window_s),
            bank.open.get(key),
            bank,
            reference,
            by,
            window_s,
        )
    series = bank[key]
    view = series.view(width, window_s)
    label, sublabel, note = metric.label, metric.sublabel, None
    plan = state.plan
    if key == "loss":
        label = LOSS_LABELS.get(state.current_stage or "", metric.label)
    elif key == "mem_gib" and plan is not None and plan.hbm_per_gpu_gib:
        sublabel = f"of {fixed(plan.hbm_per_gpu_gib, 0)} GiB"
    elif key == "mfu" and plan is not None and is_fp8(plan.precision) and series.last is None:
        note = MFU_UNMEASURED
    elif key == "rl_staleness":
        rl = state.telemetry.rl if state.telemetry is not None else None
        sublabel = f"bound {integer(rl.staleness_bound)}" if rl is not None else ""
    chart = _chart(key, label, sublabel, metric.unit, metric.floor, view, note)
    return with_reference(chart, series, bank, reference, by, window_s)


OPEN_LABEL_WIDTH = 48
"""Characters of an open metric's name a chart label keeps."""
_NO_SERIES = TelemetrySeries("", raw=1)
"""What an open metric not (or no longer) in the bank draws: an empty chart."""


def open_chart_view(
    bank: TelemetryBank, name: str, width: int, window_s: float | None
) -> ChartView:
    """The chart of open metric `name` (a `metrics{}` series), labelled with its own name
    (inert). Its unit is the name's: torchtitan writes `mfu(%)` as 39.6, so every value
    reads as a plain number; NaN/±inf are marked per column like the fixed charts'."""
    series = bank.open.get(name, _NO_SERIES)
    view = series.view(width, window_s)
    return _chart(name, one_line(name, OPEN_LABEL_WIDTH), "", "number", None, view, None)


def _chart(
    key: str,
    label: str,
    sublabel: str,
    unit: Unit,
    floor: float | None,
    view: SeriesView,
    note: str | None,
) -> ChartView:
    markers = tuple(
        Marker(column, kind, text)
        for column, text in view.markers
        if (kind := marker_kind(text)) is not None
    )
    columns = view.columns
    return ChartView(
        key=key,
        label=label,
        sublabel=sublabel,
        unit=unit,
        floor=floor,
        lows=tuple(None if c is None else c.min for c in columns),
        highs=tuple(None if c is None else c.max for c in columns),
        odd=tuple(0 if c is None else c.odd for c in columns),
        value=view.last,
        vmin=view.min,
        vmax=view.max,
        markers=markers,
        note=note,
    )


# ---------------------------------------------------------------- stages


def skipped_by_spec(state: RunState) -> Mapping[str, str]:
    """Stages the run's spec leaves out, each with why: post-training past the chosen
    phase of SFT → DPO → RLVR (all three for `none`), and any stage the plan's estimate
    omits (the API: "stages absent from the estimate are skipped")."""
    skipped: dict[str, str] = {}
    estimate = state.estimate
    if estimate is not None and estimate.stages:
        listed = {str(s.stage) for s in estimate.stages}
        for n in STAGE_ORDER:
            if n.value not in listed:
                skipped[n.value] = "not in the run's estimate"
    spec = state.spec
    if spec is not None:
        post = spec.post_training
        last = str(post.value if isinstance(post, PostTraining) else post or "none")
        if last in _POST_CHAIN:
            keep = _POST_CHAIN[: _POST_CHAIN.index(last) + 1]
            why = f"post-training stops at {stage_label(last)}"
        else:
            keep, why = (), "the spec asks for no post-training"
        skipped.update((name, why) for name in _POST_CHAIN if name not in keep)
    return skipped


def _will_not_run(state: RunState) -> str | None:
    """Why the stages still pending will not run (a failed gate, the run's end), if so."""
    failed = next((g for g in state.gates.values() if str(g.status) == "failed"), None)
    if failed is not None:
        return f"the {stage_label(failed.stage)} gate failed"
    outcome = state.outcome
    if outcome is None:
        return None
    return {
        "completed": "the run completed without it",
        "cancelled": "the run was cancelled",
    }.get(outcome, "the run failed")


def _paused(state: RunState) -> bool:
    """Whether the run waits for a person with its training stopped."""
    if state.state != "awaiting_approval":
        return False
    pending = state.pending
    return not pending or any(p.run_paused for p in pending)


def stage_views(state: RunState) -> tuple[StageView, ...]:
    """Every stage of the pipeline in order, each status derived from the spec and the run.

    A stage the spec leaves out is `skipped` from the start; once a gate failed or the
    run ended, the stages that will not run are `skipped`; the one a cancel cut is
    `cancelled`; the current stage of a run waiting for a person is `paused`, of a run
    recovering from a fault `recovering` (the header says the run's state; the stage list
    must not say `running` under it).
    """
    excluded = skipped_by_spec(state)
    ended = _will_not_run(state)
    paused = _paused(state)
    cancelled = state.outcome == "cancelled"
    views: list[StageView] = []
    for stage in state.stages:
        name = str(stage.name)
        status = str(stage.state)
        reason: str | None = None
        if status == "skipped":
            given = stage.summary.get("reason")
            reason = given if isinstance(given, str) and given else excluded.get(name)
        elif status == "pending" and (name in excluded or ended is not None):
            status, reason = "skipped", excluded.get(name) or ended
        elif status == "running" and cancelled:
            status, reason = "cancelled", ended
        elif status == "cancelled":
            reason = "the run was cancelled"
        elif status == "running" and name == state.current_stage:
            if paused:
                status = "paused"
            elif state.state == "recovering":
                status = "recovering"
        p = stage.progress
        views.append(
            StageView(
                name=name,
                status=status,
                stage=stage,
                step=None if p is None else p.step,
                total_steps=None if p is None or not p.total_steps else p.total_steps,
                tokens=None if p is None else p.tokens,
                total_tokens=None if p is None or not p.total_tokens else p.total_tokens,
                eta_s=None if p is None else p.eta_s,
                gate=stage.gate or state.gates.get(name),
                reason=reason,
            )
        )
    return tuple(views)


# ---------------------------------------------------------------- progress


def progress(state: RunState) -> Progress:
    """Step, ETA and spend of the run, from the current stage's progress and the spend.

    The step and ETA come from the stage's own progress (the `stage.progress` events
    and the snapshot carry the same field), never from a telemetry sample: the two are
    sent at different rates, and a screen showing one next to the other disagreed.
    """
    name = state.current_stage
    stage = state.stage(name) if name is not None else None
    p = stage.progress if stage is not None else None
    # Between a stage's end and the next one's start it is still the current stage: over,
    # it has no ETA (the stage list and the detail pane show none either).
    over = state.terminal or stage is None or str(stage.state) not in UNDER_WAY
    budget = state.spend.budget_usd if state.spend is not None else None
    if budget is None and state.spec is not None:
        budget = state.spec.budget_usd
    return Progress(
        stage=name,
        step=None if p is None else p.step,
        total_steps=None if p is None or not p.total_steps else p.total_steps,
        eta_s=None if p is None or over else p.eta_s,
        usd_spent=state.usd_spent,
        budget_usd=budget,
        state=state.state,
    )


def progress_of_run(run: Run | RunSummary) -> Progress:
    """`progress` of a snapshot (the runs list, the booking picker): the same numbers the
    run screen shows for the same run.

    A `RunSummary` (a `GET /v1/runs` row) has no stages: its step, total and ETA are
    unknown (None), its stage, state, spend and budget are the run's.
    """
    if isinstance(run, Run):
        return progress(RunState.from_run(run))
    return Progress(
        stage=None if run.current_stage is None else str(run.current_stage),
        step=None,
        total_steps=None,
        eta_s=None,
        usd_spent=run.spend.usd_spent,
        budget_usd=run.spend.budget_usd,
        state=str(run.state),
    )
