"""RunPicker: the backend's other runs, to draw one beside this run; type to filter.

`c` on the run screen opens it over the charts. The first row is "none" (no reference:
the charts show this run alone), then every other run of the backend, newest first, as
`GET /v1/runs` lists them: its id, state, model size and booking (inert text). Typing
filters by a case-insensitive substring of the row; up/down move while the filter keeps
the keys; Enter picks; Escape closes without a change. The list is read once, in a
worker, when the picker opens (a failure says so in the picker: "none" is still there).
Enter on a filter that matches nothing yet because the list is still being read picks
the first match once it is read: typed ahead, `completed⏎` means that run.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ito_tui.client.errors import ItoError
from ito_tui.contract import RunSummary
from ito_tui.format import status_label
from ito_tui.textsafe import one_line
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput

__all__ = ["NONE_ROW", "RunChoice", "RunPicker", "run_row"]

NONE_ROW = "none: this run alone"
CURRENT = "✓"
"""The mark of the run drawn as the reference now."""


@dataclass(frozen=True, slots=True)
class RunChoice:
    """What the picker was dismissed with: a run id, or None for no reference."""

    run_id: str | None


def run_row(run: RunSummary, current: str | None = None) -> str:
    """A run as its row reads (and as the filter searches it)."""
    mark = CURRENT if run.run_id == current else " "
    size = one_line(run.model_size or "—", 8)
    return (
        f"{mark} {one_line(run.run_id, 24):<24} {status_label(run.state):<12} "
        f"{size:<6} {one_line(run.booking_id, 24)}"
    )


class RunPicker(StyledOnFirstShow, ModalScreen[RunChoice | None]):
    """The runs to compare with (`exclude`: this run, not offered); `current`: the
    reference drawn now (marked ✓)."""

    DEFAULT_CSS = """
    RunPicker { align: center middle; }
    RunPicker #run-picker {
        width: 90%; max-width: 80; height: auto; max-height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    RunPicker #run-picker-title { height: 1; text-style: bold; }
    RunPicker #run-filter { height: 1; border: none; padding: 0 1; background: $boost; }
    RunPicker #run-picker-status { height: 1; color: $text-muted; }
    RunPicker #run-picker-status.-error { color: $error; text-style: bold; }
    RunPicker #run-list { height: auto; max-height: 20; border: none; padding: 0; }
    """
    BINDINGS = [
        Binding(
            "escape",
            "close",
            "Close",
            tooltip="Close without a change",
            id="run_picker.close",
        ),
        # Priority: the filter's Input has the keys and would take Enter.
        Binding(
            "enter",
            "pick",
            "Compare",
            tooltip="Draw the highlighted run beside this one (none: this run alone)",
            priority=True,
            id="run_picker.pick",
        ),
        Binding("down", "move(1)", "Down", show=False, id="run_picker.down"),
        Binding("up", "move(-1)", "Up", show=False, id="run_picker.up"),
    ]

    def __init__(self, exclude: str, current: str | None = None) -> None:
        super().__init__()
        self.exclude = exclude
        self.current = current
        self.runs: tuple[RunSummary, ...] = ()
        self.loaded = False
        self._shown: tuple[RunSummary | None, ...] = (None,)
        self._query = ""
        self._error: str | None = None
        self._pick_when_read = False

    def compose(self) -> ComposeResult:
        with Vertical(id="run-picker"):
            yield Static(f"Compare {self.exclude} with", id="run-picker-title", markup=False)
            yield SteadyInput(placeholder="filter: id, state, size, booking", id="run-filter")
            yield Static("reading the runs…", id="run-picker-status", markup=False)
            yield OptionList(id="run-list")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._filter("")
        self.query_one("#run-filter", Input).focus()
        self._load()

    @work(exclusive=True, group="run-picker", exit_on_error=False)
    async def _load(self) -> None:
        try:
            runs = await shell(self).client.runs()
        except ItoError as exc:
            self._error = f"could not read the runs: {one_line(str(exc), 60)}"
        else:
            self.runs = tuple(r for r in runs if r.run_id != self.exclude)
        self.loaded = True
        self._filter(self._query)
        if self._pick_when_read:
            self.action_pick()

    @on(Input.Changed, "#run-filter")
    def _changed(self, event: Input.Changed) -> None:
        self._filter(event.value)

    def _filter(self, query: str) -> None:
        self._query = query
        needle = query.strip().casefold()
        rows = [r for r in self.runs if needle in run_row(r).casefold()]
        self._shown = (None, *rows) if not needle or needle in NONE_ROW else tuple(rows)
        options = self.query_one("#run-list", OptionList)
        options.clear_options()
        options.add_options(
            Option(Content(f"  {NONE_ROW}" if r is None else run_row(r, self.current)))
            for r in self._shown
        )
        ids = [None if r is None else r.run_id for r in self._shown]
        if ids:
            # The reference drawn now, else the newest run (the likeliest pick), else none.
            first = 1 if ids[0] is None and len(ids) > 1 else 0
            current = self.current
            options.highlighted = (
                ids.index(current) if current is not None and current in ids else first
            )
        status = self.query_one("#run-picker-status", Static)
        status.set_class(self._error is not None, "-error")
        if self._error is not None:
            status.update(self._error)
        elif not self.loaded:
            then = " · Enter taken: the first match is drawn" if self._pick_when_read else ""
            status.update(f"reading the runs…{then}")
        elif not self.runs:
            status.update("no other run on this backend")
        else:
            status.update(f"{len(rows)} of {len(self.runs)} runs · Enter draws it beside")

    def action_move(self, step: int) -> None:
        options = self.query_one("#run-list", OptionList)
        if self._shown:
            current = options.highlighted or 0
            options.highlighted = max(0, min(len(self._shown) - 1, current + step))

    @on(OptionList.OptionSelected, "#run-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._pick(event.option_index)

    def action_pick(self) -> None:
        index = self.query_one("#run-list", OptionList).highlighted
        if index is not None:
            self._pick(index)
        elif not self.loaded:
            self._pick_when_read = True
            self._filter(self._query)

    def _pick(self, index: int) -> None:
        if 0 <= index < len(self._shown):
            run = self._shown[index]
            self.dismiss(RunChoice(None if run is None else run.run_id))

    def action_close(self) -> None:
        self.dismiss(None)
