"""Checkpoints and faults as a timeline, with fault-tolerance SLO breaches highlighted."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.contract import Checkpoint, FaultRecord
from ito_tui.format import MISSING, duration, fixed, integer, stage_label
from ito_tui.textsafe import safe

DETECT_SLO_S = 600.0
"""Fault detection must take less than 10 minutes (simulated seconds)."""
RESUME_SLO_S = 900.0
"""Resuming after a fault must take less than 15 minutes (simulated seconds)."""
SAVED_FROM = 50
"""Pane width from which the checkpoint table says when each was saved."""
WORDS_FROM = 66
"""Pane width from which its headers are words ("blocking s"), not abbreviations."""


def write_gb_per_s(ckpt: Checkpoint) -> float | None:
    """Checkpoint write bandwidth: size over persist time."""
    if ckpt.persist_s <= 0:
        return None
    return ckpt.size_gb / ckpt.persist_s


def detect_breached(fault: FaultRecord) -> bool:
    return "detect" in fault.slo_breached or (fault.detected_after_s or 0.0) > DETECT_SLO_S


def resume_breached(fault: FaultRecord) -> bool:
    return "resume" in fault.slo_breached or (fault.resumed_after_s or 0.0) > RESUME_SLO_S


class Timeline(Widget):
    """Two tables: checkpoints (newest last) and faults with SLO breaches marked."""

    DEFAULT_CSS = """
    Timeline { height: auto; padding: 0 1; }
    Timeline > .timeline--breach { color: $gate-failed; text-style: bold reverse; }
    Timeline > .timeline--ok { color: $gate-passed; }
    Timeline > .timeline--title { text-style: bold; }
    """
    COMPONENT_CLASSES = {"timeline--breach", "timeline--ok", "timeline--title"}

    checkpoints: reactive[tuple[Checkpoint, ...]] = reactive(tuple, always_update=True, layout=True)
    """Checkpoints of the run, oldest first."""
    faults: reactive[tuple[FaultRecord, ...]] = reactive(tuple, always_update=True, layout=True)
    """Faults of the run, oldest first."""
    max_rows: reactive[int] = reactive(12)
    """Checkpoint rows shown (the newest ones)."""

    def render(self) -> RenderableType:
        title = self.get_component_rich_style("timeline--title", partial=True)
        parts: list[RenderableType] = [
            Text(f"Checkpoints ({len(self.checkpoints)})", style=title),
            self._checkpoint_table(self.checkpoints[-self.max_rows :], self.size.width)
            if self.checkpoints
            else Text("none yet"),
            Text(
                f"\nFaults ({len(self.faults)}) · SLO detect < 10 min, resume < 15 min", style=title
            ),
            (self._fault_table(self.faults) if self.size.width >= 70 else self._fault_lines())
            if self.faults
            else Text("none"),
        ]
        return Group(*parts)

    @staticmethod
    def _checkpoint_table(ckpts: Sequence[Checkpoint], width: int) -> Table:
        """Newest last; when each was saved (UTC) and the headers in words where it fits."""
        table = Table(box=None, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
        saved = width >= SAVED_FROM
        words = width >= WORDS_FROM
        columns = [
            "stage",
            "step",
            "GB",
            *(("blocking s", "persist s") if words else ("blk s", "pers s")),
            "GB/s",
        ]
        if saved:
            columns.insert(0, "saved UTC")
        for col in columns:
            left = col in ("stage", "saved UTC")
            table.add_column(col, justify="left" if left else "right", no_wrap=True)
        for c in ckpts:
            bw = write_gb_per_s(c)
            table.add_row(
                *((f"{c.created_at:%H:%M:%S}",) if saved else ()),
                stage_label(c.stage),
                integer(c.step),
                fixed(c.size_gb, 0, grouping=True),
                fixed(c.blocking_s, 1),
                fixed(c.persist_s, 0),
                MISSING if bw is None else fixed(bw, 1),
            )
        return table

    def _fault_lines(self) -> Text:
        """Faults as two lines each, for panes too narrow for the table."""
        breach = self.get_component_rich_style("timeline--breach", partial=True)
        out = Text()
        for i, f in enumerate(self.faults):
            if i:
                out.append("\n")
            step = "" if f.step is None else f" at step {integer(f.step)}"
            out.append(f"{safe(f.kind)} on {safe(f.node or '?')}{step}\n  detected ")
            out.append(
                f"after {duration(f.detected_after_s)}", breach if detect_breached(f) else ""
            )
            if f.resumed_after_s is not None:
                out.append(" · resumed ")
                out.append(
                    f"after {duration(f.resumed_after_s)}",
                    breach if resume_breached(f) else "",
                )
            else:
                out.append(" · not resumed yet")
            if f.lost_steps is not None:
                out.append(f" · lost {integer(f.lost_steps)} steps")
            if detect_breached(f) or resume_breached(f):
                out.append(" ⚠ SLO", breach)
        return out

    def _fault_table(self, faults: Sequence[FaultRecord]) -> Table:
        breach = self.get_component_rich_style("timeline--breach", partial=True)
        table = Table(box=None, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
        for col in ("kind", "node", "step", "detected", "resumed", "lost"):
            table.add_column(col, justify="left" if col in ("kind", "node") else "right")
        for f in faults:
            detected = Text(f"after {duration(f.detected_after_s)}")
            if detect_breached(f):
                detected = Text(f"⚠ {duration(f.detected_after_s)} SLO", style=breach)
            if f.resumed_after_s is None:
                resumed = Text("…" if not f.recovered else MISSING)
            elif resume_breached(f):
                resumed = Text(f"⚠ {duration(f.resumed_after_s)} SLO", style=breach)
            else:
                resumed = Text(f"after {duration(f.resumed_after_s)}")
            table.add_row(
                Text(safe(f.kind)),
                Text(safe(f.node) if f.node else MISSING),
                MISSING if f.step is None else integer(f.step),
                detected,
                resumed,
                MISSING if f.lost_steps is None else integer(f.lost_steps),
            )
        return table
