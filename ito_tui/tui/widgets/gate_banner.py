"""The failed-gate banner: names the gate and its failing benchmarks; the run was stopped."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.contract import Gate
from ito_tui.format import general, stage_label
from ito_tui.textsafe import safe


def failing_summary(gate: Gate) -> str:
    """`mmlu 0.412 < 0.450, gsm8k …` for the failing results of a gate."""
    parts = []
    for r in gate.failing:
        parts.append(
            f"{safe(r.benchmark)} {general(r.value)} (needs {r.comparator} {general(r.threshold)})"
        )
    return ", ".join(parts) or "no benchmark reported"


class GateBanner(Widget):
    """Shown when a gate failed. It states the stop; it offers no way to continue."""

    DEFAULT_CSS = """
    GateBanner {
        display: none;
        height: auto;
        padding: 0 1;
        background: $gate-failed 20%;
        border-left: thick $gate-failed;
        color: $text;
    }
    GateBanner.-failed { display: block; }
    """

    gate: reactive[Gate | None] = reactive(None, always_update=True, layout=True)
    """The failed gate, or None to hide the banner."""

    def watch_gate(self, gate: Gate | None) -> None:
        self.set_class(gate is not None, "-failed")

    def render(self) -> RenderableType:
        gate = self.gate
        if gate is None:
            return ""
        text = Text()
        text.append("✗ GATE FAILED ", style="bold")
        text.append(f"{stage_label(gate.stage)} gate {safe(gate.gate_id)}")
        text.append(f" ({safe(gate.battery_id)})")
        text.append("\nThe run was stopped by this gate. ", style="bold")
        text.append("Failing: " + failing_summary(gate))
        # One line at 80 columns: the key that starts the new run, with this run's spec.
        text.append("\nA failed gate cannot be overridden; start a new run ")
        text.append("(n: from this spec)", style="bold")
        text.append(".")
        return text
