"""The runs list's marks: `space` marks up to two runs, `c` compares them, `v` diffs them.

`RunMarks` is the runs list's base (`RunsScreen`): the bindings, the marks (in the order
made; a third lets the oldest go) and what they add to a row (`#1 `, `#2 ` before the run
id, in `runs--marked`, bold reverse: not colour alone) and to the caption. `c` opens run
#1's screen with run #2 drawn on its charts; `v` shows their spec diff.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.screen import Screen

from ito_tui.textsafe import safe

__all__ = ["RunMarks"]


class RunMarks(Screen[None]):
    """The marks and their keys (`RunsScreen` lays out the list)."""

    BINDINGS = [
        Binding(
            "space",
            "mark",
            "Mark",
            id="runs.mark",
            tooltip="Mark the highlighted run to compare (two at most: #1 opens, #2 is drawn)",
            show=False,  # F1 lists it; the caption says what is marked
        ),
        Binding(
            "c",
            "compare",
            "Compare",
            id="runs.compare",
            tooltip="Open run #1 with run #2 drawn on its charts",
        ),
        Binding(
            "v",
            "spec_diff",
            "Spec diff",
            id="runs.spec_diff",
            tooltip="The marked runs' specs, plans and estimates side by side",
        ),
    ]

    marked: tuple[str, ...] = ()
    """Runs marked to compare, in the order marked: at most two."""

    def selected_run_id(self) -> str | None:
        raise NotImplementedError

    def _fill(self) -> None:
        raise NotImplementedError

    def marks_allow(self, action: str) -> bool | None:
        """`check_action`'s answer for the marks' actions (None: not one of them)."""
        if action in ("compare", "spec_diff"):
            return len(self.marked) == 2
        return None

    def with_mark(self, run_id: str, row: tuple[Text, ...]) -> tuple[Text, ...]:
        """`row` with its mark (`#1 `, `#2 `) before the run id when the run is marked."""
        if run_id not in self.marked:
            return row
        style = self.get_component_rich_style("runs--marked", partial=True)
        cell = Text()
        cell.append(f"#{self.marked.index(run_id) + 1}", style=style)  # a span: the id's own
        cell.append(" ")
        cell.append_text(row[0])
        return (cell, *row[1:])

    def marks_caption(self) -> str:
        """What the caption says of the marks ("" without any)."""
        if not self.marked:
            return ""
        marks = ", ".join(f"#{n} {safe(run_id)}" for n, run_id in enumerate(self.marked, 1))
        more = "c compares, v spec diff" if len(self.marked) == 2 else "space marks one more"
        return f" · marked {marks} ({more})"

    def action_mark(self) -> None:
        run_id = self.selected_run_id()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked = tuple(m for m in self.marked if m != run_id)
        else:
            self.marked = (*self.marked, run_id)[-2:]  # a third lets the oldest go
        self._fill()
        self.refresh_bindings()

    async def action_compare(self) -> None:
        from ito_tui.tui.screens.pipeline import PipelineScreen

        if len(self.marked) == 2:
            first, second = self.marked
            screen = PipelineScreen(first)
            await self.app.push_screen(screen)  # mounted: its charts can take a reference
            screen.compare.choose(second)

    def action_spec_diff(self) -> None:
        from ito_tui.tui.screens.spec_diff import SpecDiffScreen

        if len(self.marked) == 2:
            self.app.push_screen(SpecDiffScreen(*self.marked))
