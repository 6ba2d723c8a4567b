"""SpecDiffScreen: two runs' specs, plans and estimates side by side, the differences marked.

`v` on the run screen (this run and its reference) and on the runs list (the two marked
runs) opens it. Both runs are read in a worker (`GET /v1/runs/{id}` each); the rows are
`state.specdiff.spec_diff`'s, a heading per section (spec, plan, estimate). A field that
differs is marked twice, so it reads without colour: a `≠` in the first column and its
cells in the `spec-diff--differs` style (bold). Backend values are literal text (never
markup). `d` shows only the differing fields, or all of them again.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ito_tui.client.errors import ItoError
from ito_tui.contract import Run
from ito_tui.state.specdiff import DiffRow, spec_diff
from ito_tui.textsafe import one_line
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.steady_footer import SteadyFooter

__all__ = ["DIFFERS", "SpecDiffScreen"]

DIFFERS = "≠"
"""The mark of a field whose values differ."""
FIELD_WIDTH = 16
PADDING = 2
"""DataTable's cell padding: one cell each side of every column."""
RESERVE = 2
"""Kept free for the table's vertical scrollbar."""
SECTION_WORDS = {"spec": "Spec", "plan": "Plan", "estimate": "Estimate"}


class SpecDiffScreen(StyledOnFirstShow, Screen[None]):
    """Runs `a` and `b` field by field; Escape goes back."""

    DEFAULT_CSS = """
    SpecDiffScreen #spec-diff-caption { height: 1; padding: 0 1; color: $text-muted; }
    SpecDiffScreen #spec-diff-caption.-error { color: $error; text-style: bold; }
    SpecDiffScreen DataTable { height: 1fr; }
    SpecDiffScreen > .spec-diff--differs { color: $warning; text-style: bold; }
    SpecDiffScreen > .spec-diff--section { color: $accent; text-style: bold; }
    """
    COMPONENT_CLASSES = {"spec-diff--differs", "spec-diff--section"}

    BINDINGS = [
        Binding(
            "d",
            "toggle_same",
            "Only differences",
            id="spec_diff.only_differences",
            tooltip="Show only the fields that differ, or every field again",
        ),
        Binding("escape", "back", "Back", id="spec_diff.back", tooltip="Back"),
    ]

    def __init__(self, a: str, b: str, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.a_id, self.b_id = a, b
        self.rows: tuple[DiffRow, ...] = ()
        self.only_differences = False
        self.loaded = False

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection=session.connection,
            demo=session.demo,
            title="Spec diff",
        )
        yield Static(f"reading {self.a_id} and {self.b_id}…", id="spec-diff-caption", markup=False)
        yield DataTable(cursor_type="row", id="spec-diff-table")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._load()

    @work(exclusive=True, group="spec-diff", exit_on_error=False)
    async def _load(self) -> None:
        client = shell(self).client
        try:
            a: Run = await client.run(self.a_id)
            b: Run = await client.run(self.b_id)
        except ItoError as exc:
            caption = self.query_one("#spec-diff-caption", Static)
            caption.add_class("-error")
            caption.update(Text(f"Could not read the runs: {one_line(str(exc), 200)}"))
            self.loaded = True
            return
        self.rows = spec_diff(a, b)
        self.loaded = True
        self._fill()

    def on_resize(self) -> None:
        if self.rows:
            self._fill()

    def _caption(self) -> str:
        n = sum(1 for r in self.rows if r.differs)
        fields = "field differs" if n == 1 else "fields differ"
        shown = "only those shown" if self.only_differences else "d: only those"
        return f"{self.a_id} vs {self.b_id} · {n} {fields} ({DIFFERS}) · {shown}"

    def _fill(self) -> None:
        self.query_one("#spec-diff-caption", Static).update(Text(self._caption()))
        differs = self.get_component_rich_style("spec-diff--differs", partial=True)
        section = self.get_component_rich_style("spec-diff--section", partial=True)
        table: DataTable[Text] = self.query_one(DataTable)
        # Two value columns share what the mark and the field names leave.
        room = self.app.size.width - RESERVE - 4 * PADDING - 1 - FIELD_WIDTH
        value = max(8, room // 2)
        table.clear(columns=True)
        table.add_column("", width=1, key="mark")
        table.add_column("field", width=FIELD_WIDTH, key="field")
        table.add_column(Text(one_line(self.a_id, value)), width=value, key="a")
        table.add_column(Text(one_line(self.b_id, value)), width=value, key="b")
        last = None
        first_differing: str | None = None
        for n, row in enumerate(self.rows):
            if self.only_differences and not row.differs:
                continue
            if row.section != last:
                last = row.section
                title = Text(SECTION_WORDS[row.section], style=section)
                table.add_row(Text(""), title, Text(""), Text(""), key=f"section-{row.section}")
            style = differs if row.differs else ""
            if row.differs and first_differing is None:
                first_differing = f"{n}"
            # A value longer than its column wraps (a data ref that differs at its end
            # must show its end): the row is as high as its longest value needs.
            lines = max(1, *(-(-len(v) // value) for v in (row.a, row.b)))
            table.add_row(
                Text(DIFFERS if row.differs else " ", style=style),
                Text(one_line(row.field, FIELD_WIDTH), style=style),
                *(Text(v, style=style, overflow="fold") for v in (row.a, row.b)),
                key=f"{n}",
                height=lines,
            )
        if first_differing is not None:
            # The cursor starts on the first difference (the headings are not fields).
            table.move_cursor(row=table.get_row_index(first_differing))

    def action_toggle_same(self) -> None:
        self.only_differences = not self.only_differences
        if self.rows:
            self._fill()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
