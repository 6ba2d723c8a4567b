"""Detail of one stage: data prep summaries, ladder decision, plan and gate battery table.

It draws the selected stage's `StageView` (the tracker's, the same value the stage list
draws), so its status, step and ETA are the list's, in the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.geometry import Region
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.contract import Gate, Plan
from ito_tui.describe import mfu_text
from ito_tui.format import MISSING, count, fixed, number, percent, stage_label, status_label
from ito_tui.state.views import StageView
from ito_tui.textsafe import safe

from .runfmt import STATE_GLYPHS, elapsed, literal
from .stages import amount_text


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a payload model or a summary dict (the backend may send either)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _number(value: object, fmt: Callable[[float], str]) -> str:
    """`fmt(value)` for a number; anything else as the backend sent it (a summary is
    the backend's own dict: a string where a number belongs must not crash the pane)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt(value)
    return safe(value)


def _f3(value: float) -> str:
    return fixed(value, 3)


def gate_table(gate: Gate, pass_style: Style | str = "", fail_style: Style | str = "") -> Table:
    """The gate battery as a table: benchmark, metric, value ± stderr, threshold, ref, verdict."""
    table = Table(box=None, pad_edge=False, show_edge=False, expand=False, header_style="bold")
    for name, justify in (
        ("benchmark", "left"),
        ("metric", "left"),
        ("value ± se", "right"),
        ("threshold", "left"),
        ("ref", "right"),
        ("result", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for r in gate.results:
        ref = MISSING if r.reference_value is None else _f3(r.reference_value)
        verdict = Text("✓ pass", style=pass_style) if r.passed else Text("✗ FAIL", style=fail_style)
        table.add_row(
            literal(r.benchmark),
            literal(r.metric),
            f"{_f3(r.value)} ± {_f3(r.stderr)}",
            Text(f"{r.comparator} {_f3(r.threshold)} {safe(r.rule)}"),
            ref,
            verdict,
        )
    return table


def gate_lines(gate: Gate, pass_style: Style | str = "", fail_style: Style | str = "") -> Text:
    """The gate battery as two lines per result, for panes too narrow for the table."""
    out = Text()
    for i, r in enumerate(gate.results):
        if i:
            out.append("\n")
        verdict = ("✓ pass ", pass_style) if r.passed else ("✗ FAIL ", fail_style)
        out.append(*verdict)
        out.append(f"{safe(r.benchmark)} {safe(r.metric)} {_f3(r.value)} ± {_f3(r.stderr)}")
        ref = "" if r.reference_value is None else f" · ref {_f3(r.reference_value)}"
        out.append(f"\n       needs {r.comparator} {_f3(r.threshold)} ({safe(r.rule)}){ref}")
    return out


def plan_lines(plan: Plan) -> list[Text]:
    mfu = mfu_text(plan.est_mfu_frac, plan.precision)
    lines = [
        Text(
            f"world {plan.world_size} = dp {plan.dp_replicate}×{plan.dp_shard} "
            f"tp {plan.tp} pp {plan.pp} cp {plan.cp}"
        ),
        Text(
            f"{safe(plan.precision)} · act-ckpt {safe(plan.activation_checkpoint)} · "
            f"compile {'on' if plan.compile else 'off'} · ft {safe(plan.fault_tolerance)}"
        ),
        Text(
            f"mem {fixed(plan.est_mem_per_gpu_gib, 0)}/{fixed(plan.hbm_per_gpu_gib, 0)} GiB · "
            f"{fixed(plan.est_tokens_per_s_per_gpu, 0, grouping=True)} tok/s/GPU · MFU {mfu} · "
            f"batch {count(plan.global_batch_tokens)} tok"
        ),
    ]
    lines.extend(Text("· ") + literal(reason) for reason in plan.rationale)
    return lines


def data_lines(summaries: Mapping[str, Any]) -> list[Text]:
    lines: list[Text] = []
    manifest = summaries.get("manifest")
    if manifest is not None:
        lines.append(
            Text(
                f"manifest: {_count(_get(manifest, 'documents'))} docs, "
                f"{_count(_get(manifest, 'tokens'))} tokens, "
                f"{safe(_get(manifest, 'shards', 0))} shards"
            )
        )
    dedup = summaries.get("dedup")
    if dedup is not None:
        removed = _number(_get(dedup, "removed_frac", 0.0), lambda v: percent(v, 1))
        lines.append(
            Text(
                f"dedup ({safe(_get(dedup, 'method', 'minhash'))}): removed {removed} "
                f"({_count(_get(dedup, 'documents_before'))} → "
                f"{_count(_get(dedup, 'documents_after'))} docs)"
            )
        )
    decontam = summaries.get("decontam")
    if decontam is not None:
        per = _get(decontam, "per_benchmark", {}) or {}
        lines.append(
            Text(f"decontamination: {safe(_get(decontam, 'removed_documents', 0))} docs removed")
        )
        lines.extend(Text(f"  {safe(name)}: {safe(n)}") for name, n in sorted(per.items()))
    return lines


def summary_value(value: object) -> str:
    """A value of a stage's summary as an operator reads it: `16.1B` for 16060000000,
    `15,316`, `2.163` for 2.16282; anything but a number as the backend sent it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return safe(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) < 1_000_000 else count(value)
    return number(value, 4)


def _count(value: object) -> str:
    return count(None) if value is None else _number(value, count)


def ladder_lines(ladder: Any) -> list[Text]:
    decision = safe(_get(ladder, "decision", "?"))
    text = [Text(f"150M-ladder decision: {decision.upper()}", style="bold")]
    ref, cand = _get(ladder, "reference_loss"), _get(ladder, "candidate_loss")
    if ref is not None and cand is not None:
        text.append(Text(f"candidate loss {_number(cand, _f3)} vs reference {_number(ref, _f3)}"))
    detail = _get(ladder, "detail", "")
    if detail:
        text.append(literal(detail))
    return text


class StageDetail(Widget):
    """Everything known about the selected stage. Data arrives through reactives."""

    DEFAULT_CSS = """
    StageDetail { height: auto; padding: 0 1; }
    StageDetail > .detail--pass { color: $gate-passed; }
    StageDetail > .detail--fail { color: $gate-failed; text-style: bold; }
    StageDetail > .detail--title { text-style: bold; }
    """
    COMPONENT_CLASSES = {"detail--pass", "detail--fail", "detail--title"}

    # The screen assigns all three at every repaint of the run; an equal value (most
    # telemetry events leave the stage as it was) does nothing. A new one repaints the
    # lines whose text changed (`_changed`), and lays the screen out again only when the
    # number of lines changed (its height is auto).
    view: reactive[StageView | None] = reactive(None, repaint=False)
    """The selected stage (`RunTracker.stages()`)."""
    summaries: reactive[Mapping[str, Any]] = reactive(dict, repaint=False)
    """Data summaries by name: manifest, dedup, decontam, ladder."""
    plan: reactive[Plan | None] = reactive(None, repaint=False)
    """The run's plan (shown for the plan stage)."""

    _drawn: tuple[int, list[str]] | None = None
    """The width and the lines last drawn (as `_lines` sees them)."""

    def watch_view(self) -> None:
        self._changed()

    def watch_summaries(self) -> None:
        self._changed()

    def watch_plan(self) -> None:
        self._changed()

    def _lines(self, width: int) -> list[str]:
        console = self.app.console
        lines = console.render_lines(self.render(), console.options.update_width(width), pad=False)
        return ["".join(segment.text for segment in line) for line in lines]

    def _changed(self) -> None:
        width = self.content_region.width
        if not self.is_mounted or width <= 0:
            self.refresh(layout=True)
            return
        lines = self._lines(width)
        drawn, self._drawn = self._drawn, (width, lines)
        if drawn is None or drawn[0] != width or len(drawn[1]) != len(lines):
            self.refresh(layout=True)
            return
        changed = [y for y, (a, b) in enumerate(zip(drawn[1], lines, strict=True)) if a != b]
        if changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def render(self) -> RenderableType:
        view = self.view
        if view is None:
            return Text("Select a stage.")
        state = view.status
        stage = view.stage
        parts: list[RenderableType] = []
        title = Text(
            f"{STATE_GLYPHS.get(state, '?')} {stage_label(view.name)} — {status_label(state)}",
            style=self.get_component_rich_style("detail--title", partial=True),
        )
        took = "" if stage is None else elapsed(stage.started_at, stage.ended_at)
        if took:
            title.append(f" · took {took}")
        parts.append(title)
        name = view.name
        if state in ("skipped", "cancelled"):
            # Why, in the tracker's words (or the backend's own: literal).
            word = "Skipped" if state == "skipped" else "Cancelled"
            parts.append(literal(f"{word}: {view.reason}." if view.reason else f"{word}."))
        if view.step is not None or view.tokens is not None:
            # The list's own words for the step, ETA and tokens (its second progress row).
            parts.append(Text(amount_text(view, self.content_region.width or 1000)))
        if name == "data_prep":
            parts.extend(data_lines(self.summaries) or [Text("No data summaries yet.")])
        elif name == "ladder":
            ladder = self.summaries.get("ladder")
            parts.extend(ladder_lines(ladder) if ladder is not None else [Text("No decision yet.")])
        elif name == "plan":
            parts.extend(plan_lines(self.plan) if self.plan else [Text("No plan selected yet.")])
        for key, value in sorted((stage.summary if stage is not None else {}).items()):
            if not isinstance(value, dict | list):
                parts.append(literal(f"{key}: {summary_value(value)}", style="dim"))
        if view.gate is not None:
            gate = view.gate
            parts.append(
                Text(
                    f"\ngate {safe(gate.gate_id)} · battery {safe(gate.battery_id)} · "
                    f"{safe(gate.status)}",
                    style="bold",
                )
            )
            if gate.results:
                styles = (
                    self.get_component_rich_style("detail--pass", partial=True),
                    self.get_component_rich_style("detail--fail", partial=True),
                )
                wide = self.size.width >= 70
                parts.append(gate_table(gate, *styles) if wide else gate_lines(gate, *styles))
            else:
                parts.append(Text("no results yet"))
        return Group(*parts)
