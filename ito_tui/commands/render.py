"""Human-readable renderings of estimates, runs and proposals for the headless commands.

Every value that came from the backend passes through `safe()`; numbers are
formatted here, through `ito_tui.format` (`NaN`, `∞`, `>999d`, `1e308`: never a
traceback). Nothing in this module talks to the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ito_tui.describe import action_phrases, evidence_phrases, impact_phrases
from ito_tui.format import fixed, general, integer, percent

from .context import print_refusals
from .output import Output, duration_s, hours, money, safe

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
}

FP8 = {"float8_rowwise", "float8_tensorwise", "mxfp8"}

PROPOSAL_STATUSES = ("pending", "approved", "rejected", "expired", "executed")
"""The statuses a proposal can be in (`--status` of `proposals` and `decisions`)."""


def state_text(out: Output, state: object) -> str:
    """A state name, coloured by meaning when colour is on."""
    text = safe(state)
    return out.style(text, *_STATE_STYLE.get(text, ()))


def booking_line(b: Booking) -> str:
    return (
        f"{safe(b.booking_id)}: {safe(b.gpu_sku)}, {b.node_count} × {b.gpus_per_node} = "
        f"{b.gpu_count} GPUs, {safe(b.fabric.kind)} {general(b.fabric.gbit_per_s_per_gpu, 6)} "
        "Gb/s per GPU, "
        f"{money(b.price_usd_per_gpu_hour)}/GPU-h"
    )


def plan_pairs(p: Plan) -> list[tuple[str, str]]:
    """Label/value pairs describing a parallelism & precision plan."""
    pct = 100 * p.est_mem_per_gpu_gib / p.hbm_per_gpu_gib if p.hbm_per_gpu_gib else 0.0
    precision = safe(p.precision)
    if p.est_mfu_frac is not None:
        mfu = percent(p.est_mfu_frac, 1)
    else:
        mfu = "n/a under fp8" if precision in FP8 else "n/a"
    return [
        (
            "parallelism",
            f"world {p.world_size} = replicate {p.dp_replicate} × shard {p.dp_shard}; "
            f"tp {p.tp} · pp {p.pp} · cp {p.cp}",
        ),
        (
            "precision",
            f"{precision}; activation checkpointing {safe(p.activation_checkpoint)}; "
            f"compile {'on' if p.compile else 'off'}",
        ),
        ("fault tolerance", safe(p.fault_tolerance)),
        (
            "batch",
            f"{p.local_batch_seqs} seqs/GPU, {integer(p.global_batch_tokens)} tokens global",
        ),
        (
            "memory/GPU",
            f"{fixed(p.est_mem_per_gpu_gib, 1)} GiB of {fixed(p.hbm_per_gpu_gib, 0)} GiB HBM "
            f"({fixed(pct, 0)}%)",
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
            [safe(s.stage), integer(s.tokens), fixed(s.gpu_hours, 0, grouping=True),
             hours(s.wall_clock_h), money(s.usd)]
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
                f"p50 {hours(est.wall_clock_h_p50)}, p90 {hours(est.wall_clock_h_p90)} "
                f"(booking window: {window_ok})",
            ),
            (
                "cost",
                f"p50 {money(est.usd_p50)}, p90 {money(est.usd_p90)} "
                f"vs budget {money(budget_usd)}: {budget_ok}",
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
        f"{money(s.usd_spent)} spent of {money(s.budget_usd)} budget "
        f"({money(s.usd_committed)} committed, {fixed(s.gpu_hours, 0, grouping=True)} GPU-h)"
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
            ("stage", safe(run.current_stage) if run.current_stage else "-"),
            ("spend", spend_text(run)),
        ]
    )
    if run.failure is not None:
        out.line(
            f"  {out.style('failure', 'red', 'bold')}  {safe(run.failure.kind)}: "
            f"{safe(run.failure.detail)}"
        )
    rows = []
    for st in run.stages:
        prog = ""
        if st.progress is not None and st.progress.total_steps:
            p = st.progress
            prog = f"{integer(p.step)}/{integer(p.total_steps)} ({percent(p.frac)})"
            if p.eta_s is not None and str(st.state) == "running":
                prog += f" eta {duration_s(p.eta_s)}"
        gate = ""
        if st.gate is not None:
            gate = f"gate {safe(st.gate.status)}"
            failing = st.gate.failing
            if failing:
                gate += ": " + ", ".join(
                    f"{safe(r.benchmark)} {general(r.value)} {safe(r.comparator)} "
                    f"{general(r.threshold)}"
                    for r in failing
                )
        rows.append(["  " + safe(st.name), state_text(out, st.state), prog, gate])
    if rows:
        out.table(("  stage", "state", "progress", "gate"), rows)
    for pid in run.pending_proposal_ids:
        out.line(
            f"  {out.style('needs a decision', 'magenta', 'bold')}: proposal {safe(pid)} — "
            f"`ito-tui proposals {safe(run.run_id)}`"
        )


def render_proposal(out: Output, p: Proposal) -> None:
    """A proposal's trigger (evidence), action and impact, for review before a decision."""
    out.line(
        f"{out.style(safe(p.proposal_id), 'bold')}  {safe(p.kind)}  "
        f"{state_text(out, p.status)}  run {safe(p.run_id)}"
    )
    evidence = safe(p.trigger.reason)
    if measured := evidence_phrases(p.trigger):
        evidence += f" ({', '.join(measured)})"
    pairs = [
        ("evidence", evidence),
        ("action", ", ".join(action_phrases(p.action)) or "-"),
        ("impact", ", ".join(impact_phrases(p.impact))),
        ("run paused", "yes" if p.run_paused else "no"),
        ("expires", f"{p.expires_at:%Y-%m-%d %H:%M:%SZ} (then: {safe(p.on_expiry)})"),
    ]
    if p.decided_by:
        when = f" at {p.decided_at:%Y-%m-%d %H:%M:%SZ}" if p.decided_at else ""
        pairs.append(("decided by", f"{safe(p.decided_by)}{when}"))
    if p.comment:
        pairs.append(("comment", safe(p.comment)))
    out.pairs(pairs)
