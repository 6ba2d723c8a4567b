"""EstimatePanel: a spec's pre-flight estimate — plan, memory, time, cost, refusals."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.describe import SPEC_LABELS, mfu_text, name_fields
from ito_tui.format import MISSING, count, duration_h, fixed, stage_label, usd, usd_compact
from ito_tui.textsafe import safe
from ito_tui.tui.widgets.bars import meter

if TYPE_CHECKING:
    from ito_tui.contract import Estimate, Plan

_LABEL = 8
"""Label column: short, so rows fit the 38-cell panel of an 80-column terminal."""


def _row(label: str, *parts: str | Content | tuple[str, str]) -> Content:
    return Content.assemble((label.ljust(_LABEL), "$text-muted"), *parts)


def _plan_lines(plan: Plan) -> list[Content]:
    mfu = mfu_text(plan.est_mfu_frac, plan.precision)
    compiled = " · compile" if plan.compile else ""
    return [
        _row(
            "Plan",
            (f"dp {plan.dp_replicate}×{plan.dp_shard}", "bold"),
            f" · tp {plan.tp} · pp {plan.pp} · cp {plan.cp}",
        ),
        _row("", f"{plan.world_size} GPUs · {safe(plan.precision)}"),
        _row("", f"AC {safe(plan.activation_checkpoint)}{compiled}"),
        _row("", safe(plan.fault_tolerance)),
        _row(
            "",
            f"{plan.local_batch_seqs} seq/GPU · {count(plan.global_batch_tokens)} tok/step",
        ),
        _row("Speed", f"{fixed(plan.est_tokens_per_s_per_gpu, 0, grouping=True)} tok/s/GPU"),
        _row("MFU", mfu),
    ]


class EstimatePanel(Widget):
    """Renders an Estimate; it is given data and never fetches it.

    `stale` marks the shown estimate as out of date while a new one loads;
    `error` explains why no estimate could be had (it never blocks typing).
    """

    DEFAULT_CSS = """
    EstimatePanel {
        height: auto;
        width: 1fr;
        padding: 0 1;
    }
    EstimatePanel.-stale {
        color: $stale;
    }
    """

    estimate: reactive[Estimate | None] = reactive(None, layout=True)
    stale: reactive[bool] = reactive(False, toggle_class="-stale")
    error: reactive[str | None] = reactive(None, layout=True)
    budget: reactive[Decimal | None] = reactive(None)
    window_h: reactive[float | None] = reactive(None)

    def render(self) -> Content:
        return Content("\n").join(self.lines(max(20, self.size.width - 2)))

    def lines(self, width: int) -> list[Content]:
        """The panel's lines for a given width (also used by tests)."""
        title = Content.styled("Pre-flight estimate", "bold")
        if self.stale:
            title = Content.assemble(title, ("  updating…", "$stale italic"))
        out = [title]
        if self.error:
            out.append(Content.styled(f"Estimate unavailable: {safe(self.error)}", "$warning"))
        estimate = self.estimate
        if estimate is None:
            if not self.error:
                out.append(Content.styled("Fill in the form to see the plan and cost.", "$stale"))
            return out
        bar_width = max(8, min(40, width - _LABEL))
        out.extend(self._refusals(estimate))
        if estimate.plan is not None:
            plan = estimate.plan
            out.extend(_plan_lines(plan))
            out.append(
                _row(
                    "Memory",
                    f"{fixed(plan.est_mem_per_gpu_gib, 1)} / {fixed(plan.hbm_per_gpu_gib, 0)} GiB",
                )
            )
            out.append(_row("", meter(plan.est_mem_per_gpu_gib, plan.hbm_per_gpu_gib, bar_width)))
        # A plan that cannot run has no time or cost worth a bar (they come back as zero).
        if not (estimate.refused and estimate.total_gpu_hours == 0):
            out.extend(self._time_and_cost(estimate, bar_width))
            out.extend(self._stages(estimate))
        for warning in estimate.warnings:
            out.append(Content.assemble(("! ", "$warning bold"), safe(warning.message)))
        if estimate.plan is not None and estimate.plan.rationale:
            out.append(Content.styled("Why this plan", "bold"))
            out.extend(Content(f"· {safe(reason)}") for reason in estimate.plan.rationale)
        return out

    def _refusals(self, estimate: Estimate) -> list[Content]:
        if not estimate.refusals:
            return [Content.styled("✓ Pre-flight passed", "$gate-passed")]
        out = [Content.styled("✗ Refused: cannot be submitted", "bold $gate-failed")]
        for refusal in estimate.refusals:
            out.append(
                Content.assemble(
                    ("  ✗ ", "$gate-failed"),
                    (name_fields(refusal.reason, SPEC_LABELS), "$gate-failed"),
                )
            )
            if refusal.suggestion:
                # The form's labels, not the API's fields: `Raise Budget USD to …`.
                hint = name_fields(refusal.suggestion, SPEC_LABELS)
                out.append(Content.assemble(("    → ", "$text-muted"), hint))
        return out

    def _time_and_cost(self, estimate: Estimate, bar_width: int) -> list[Content]:
        p50, p90 = duration_h(estimate.wall_clock_h_p50), duration_h(estimate.wall_clock_h_p90)
        out = [_row("Time", f"p50 {p50} · p90 {p90}")]
        if self.window_h:
            out.append(_row("", meter(estimate.wall_clock_h_p90, self.window_h, bar_width)))
        out.append(
            _row("", ("p90 fits the booking", "$gate-passed"))
            if estimate.fits_booking_window
            else _row("", ("p90 EXCEEDS the booking", "$gate-failed"))
        )
        out.append(
            _row(
                "Cost",
                f"p50 {usd_compact(estimate.usd_p50)} · p90 {usd_compact(estimate.usd_p90)}",
            )
        )
        if self.budget:
            out.append(_row("", meter(float(estimate.usd_p90), float(self.budget), bar_width)))
            verdict = "within" if estimate.fits_budget else "OVER"
            style = "$gate-passed" if estimate.fits_budget else "$gate-failed"
            out.append(_row("", (f"p90 {verdict} {usd(self.budget)}", style)))
        out.append(_row("GPU-h", fixed(estimate.total_gpu_hours, 0, grouping=True)))
        out.append(_row("Faults", f"≈ {fixed(estimate.expected_interruptions, 1)} interruptions"))
        return out

    def _stages(self, estimate: Estimate) -> list[Content]:
        if not estimate.stages:
            return []
        out = [Content.styled(f"{'Stage':<12}{'tokens':>8}{'time':>9}{'cost':>9}", "bold")]
        for stage in estimate.stages:
            # A stage that trains on no tokens (data prep, the plan) shows none, not "0".
            tokens = count(stage.tokens) if stage.tokens else MISSING
            out.append(
                Content(
                    f"{stage_label(stage.stage)[:12]:<12}{tokens:>8}"
                    f"{duration_h(stage.wall_clock_h):>9}{usd_compact(stage.usd):>9}"
                )
            )
        return out
