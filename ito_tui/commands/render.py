"""Human-readable renderings of estimates, runs and proposals for the headless commands.

Every value that came from the backend passes through `safe()`; numbers are
formatted here, through `ito_tui.format` (`NaN`, `∞`, `>999d`, `1e308`: never a
traceback). Nothing in this module talks to the network.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ito_tui.describe import (
    action_text,
    cost_text,
    decision_text,
    evidence_text,
    expiry_text,
    gate_result_text,
    mfu_text,
    paused_text,
    proposal_words,
)
from ito_tui.format import (
    MISSING,
    count,
    duration_h,
    fixed,
    general,
    integer,
    percent,
    progress_text,
    stage_label,
    status_label,
    usd,
)

from .context import print_refusals
from .output import Output, safe

if TYPE_CHECKING:
    from ito_tui.contract import Booking, Estimate, Plan, Proposal, Run

_STATE_STYLE = {
    "passed": ("green",),
    "completed": ("green",),
    "running": ("cyan",),
    "gate_eval": ("cyan",),
    "failed": ("red", "bold"),
    "cancelled": ("yellow",),
    "skipped": ("dim",),
    "pending": ("dim",),
    "awaiting_approval": ("magenta", "bold"),
    "recovering": ("yellow",),
}

PROPOSAL_STATUSES = ("pending", "approved", "rejected", "expired", "executed")
"""The statuses a proposal can be in (`--status` of `proposals` and `decisions`)."""


def state_text(out: Output, state: object) -> str:
    """A state in the words the TUI uses (`gate eval`, `awaiting approval`), coloured by
    meaning when colour is on."""
    return out.style(status_label(state), *_STATE_STYLE.get(str(state), ()))


def booking_line(b: Booking) -> str:
    return (
        f"{safe(b.booking_id)}: {safe(b.gpu_sku)}, {integer(b.node_count)} × "
        f"{integer(b.gpus_per_node)} = {integer(b.gpu_count)} GPUs, {safe(b.fabric.kind)} "
        f"{general(b.fabric.gbit_per_s_per_gpu, 6)} Gb/s per GPU, "
        f"{usd(b.price_usd_per_gpu_hour)}/GPU-h"
    )


def plan_pairs(p: Plan) -> list[tuple[str, str]]:
    """Label/value pairs describing a parallelism & precision plan."""
    pct = 100 * p.est_mem_per_gpu_gib / p.hbm_per_gpu_gib if p.hbm_per_gpu_gib else 0.0
    precision = safe(p.precision)
    mfu = mfu_text(p.est_mfu_frac, p.precision)
    return [
        (
            "parallelism",
            f"world {integer(p.world_size)} = replicate {integer(p.dp_replicate)} × shard "
            f"{integer(p.dp_shard)}; tp {integer(p.tp)} · pp {integer(p.pp)} · cp {integer(p.cp)}",
        ),
        (
            "precision",
            f"{precision}; activation checkpointing {safe(p.activation_checkpoint)}; "
            f"compile {'on' if p.compile else 'off'}",
        ),
        ("fault tolerance", safe(p.fault_tolerance)),
        (
            "batch",
            f"{integer(p.local_batch_seqs)} seqs/GPU, {integer(p.global_batch_tokens)} tokens "
            "global",
        ),
        (
            "memory/GPU",
            f"{fixed(p.est_mem_per_gpu_gib, 1)} GiB of {fixed(p.hbm_per_gpu_gib, 0)} GiB HBM "
            f"({percent(pct / 100)})",
        ),
        ("throughput", f"{fixed(p.est_tokens_per_s_per_gpu, 0, grouping=True)} tokens/s/GPU"),
        ("MFU", mfu),
    ]


def render_estimate(out: Output, est: Estimate, budget_usd: object, booking: Booking) -> None:
    """Plan, per-stage costs, time and cost p50/p90 against budget, warnings, refusals."""
    out.line(out.style("booking", "bold") + "  " + booking_line(booking))
    if est.plan is not None:
        out.line(out.style("plan", "bold"))
        out.pairs(plan_pairs(est.plan))
        for reason in est.plan.rationale:
            out.line(f"    - {safe(reason)}")
    if est.stages:
        out.line(out.style("stages", "bold"))
        rows = [
            [stage_label(s.stage), count(s.tokens) if s.tokens else MISSING,
             fixed(s.gpu_hours, 0, grouping=True), duration_h(s.wall_clock_h), usd(s.usd)]
            for s in est.stages
        ]  # fmt: skip
        out.table(("  stage", "tokens", "gpu-h", "wall clock", "cost"), _indent(rows))
    budget_ok = out.style("fits", "green") if est.fits_budget else out.style("over", "red", "bold")
    window_ok = (
        out.style("fits", "green")
        if est.fits_booking_window
        else out.style("does not fit", "red", "bold")
    )
    out.line(out.style("estimate", "bold"))
    out.pairs(
        [
            ("GPU hours", fixed(est.total_gpu_hours, 0, grouping=True)),
            (
                "time",
                f"p50 {duration_h(est.wall_clock_h_p50)}, p90 {duration_h(est.wall_clock_h_p90)} "
                f"(booking window: {window_ok})",
            ),
            (
                "cost",
                f"p50 {usd(est.usd_p50)}, p90 {usd(est.usd_p90)} "
                f"vs budget {usd(budget_usd)}: {budget_ok}",
            ),
            ("interruptions", f"{fixed(est.expected_interruptions, 1)} expected"),
        ]
    )
    for w in est.warnings:
        out.line(f"  {out.style('warning', 'yellow')} {safe(w.code)}: {safe(w.message)}")
    if est.refusals:
        out.line(out.style("refused", "red", "bold") + ": the backend will not run this spec")
        print_refusals(out, est.refusals)


def _indent(rows: list[list[str]]) -> list[list[str]]:
    return [["  " + r[0], *r[1:]] for r in rows]


def spend_text(run: Run) -> str:
    s = run.spend
    return (
        f"{usd(s.usd_spent)} spent of {usd(s.budget_usd)} budget "
        f"({usd(s.usd_committed)} committed, {fixed(s.gpu_hours, 0, grouping=True)} GPU-h)"
    )


def render_run(out: Output, run: Run) -> None:
    """A run snapshot: state, stages with progress and gates, spend, proposals, failure."""
    out.line(
        f"{out.style(safe(run.run_id), 'bold')}  {state_text(out, run.state)}  "
        f"booking {safe(run.booking_id)}  model {safe(run.spec.model_size)}"
        + (f"  operator {safe(run.operator)}" if run.operator else "")
    )
    out.pairs(
        [
            ("stage", stage_label(run.current_stage)),
            ("spend", spend_text(run)),
        ]
    )
    if run.failure is not None:
        out.line(
            f"  {out.style('failure', 'red', 'bold')}  {status_label(run.failure.kind)}: "
            f"{safe(run.failure.detail)}"
        )
    # The stages as the TUI derives them (state.views): `skipped` once known (a spec
    # without post-training, a failed gate), `paused` while a proposal holds the run,
    # `recovering` while the run recovers from a fault.
    from ito_tui.state import RunState
    from ito_tui.state.views import stage_views

    rows = []
    for st in stage_views(RunState.from_run(run)):
        prog = ""
        p = st.stage.progress if st.stage is not None else None
        if p is not None and st.total_steps:
            # The TUI's progress text; an ETA only while the stage runs.
            shown = st if st.status == "running" else replace(st, eta_s=None)
            prog = f"{progress_text(shown)} ({percent(p.frac)})"
        gate = ""
        if st.gate is not None:
            gate = f"gate {status_label(st.gate.status)}"
            failing = st.gate.failing
            if failing:
                gate += ": " + ", ".join(gate_result_text(r) for r in failing)
        rows.append(["  " + stage_label(st.name), state_text(out, st.status), prog, gate])
    if rows:
        out.table(("  stage", "state", "progress", "gate"), rows)
    for pid in run.pending_proposal_ids:
        out.line(
            f"  {out.style('needs a decision', 'magenta', 'bold')}: proposal {safe(pid)} — "
            f"`ito-tui proposals {safe(run.run_id)}`"
        )


def render_proposal(out: Output, p: Proposal, now: datetime | None = None) -> None:
    """A proposal for review before a decision, in the TUI modal's words (`describe`):
    its kind, why it is asked (evidence), what approving does, what it costs, the expiry
    and, once decided, who decided what and when."""
    now = now or datetime.now(UTC)
    words = proposal_words(p.kind)
    out.line(
        f"{out.style(safe(p.proposal_id), 'bold')}  {words.title}  "
        f"{state_text(out, p.status)}  run {safe(p.run_id)}"
    )
    pairs = [
        ("why", evidence_text(p)),
        ("what", action_text(p)),
        ("cost", cost_text(p)),
    ]
    if str(p.status) == "pending":
        pairs.append(("waiting", f"{paused_text(p)} {expiry_text(p, now)}"))
    else:
        pairs.append(("decided", decision_text(p, now)))
    if p.comment:
        pairs.append(("comment", safe(p.comment)))
    out.pairs(pairs)
