"""MetricPicker: every metric the run's telemetry carries, with its last value; Enter charts one.

`m` on the run screen opens it over the telemetry: one row per open metric the bank holds
(`TelemetryBank.metric_names()`, the `metrics{}` names as the backend sent them, made
inert) with its newest value as the charts write it (`format.number`: `NaN`, `∞`, `−∞`, and
`—` for a null: a diverged loss is data, never a number and never a crash). Typing
filters the list: a case-insensitive substring, or a regex between slashes (`/^loss_/`,
the closing slash optional); an invalid regex says so and keeps the last good list. Enter
(or a click) adds the highlighted metric as a chart under its own name, or removes it when
it is already charted (✓); Escape closes without a change. Up/down move in the list while
the filter keeps the keys. The values are read again every second while the list is open.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ito_tui.format import number
from ito_tui.state.bank import TelemetryBank
from ito_tui.state.logfilter import compile_search
from ito_tui.textsafe import one_line
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput

NAME_WIDTH = 44
"""Cells of the name column (a longer name is cut with …)."""
VALUE_WIDTH = 12
"""Cells of the value column."""
CHARTED = "✓"
"""The mark of a metric already charted."""
REFRESH_S = 1.0
"""How often an open list reads the values again."""


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One metric of the list: its name as sent, its newest value, whether it is charted."""

    name: str
    value: float | None
    charted: bool = False

    def text(self, width: int = NAME_WIDTH) -> str:
        """The row as shown: mark, name (inert, cut to `width`) and value."""
        mark = CHARTED if self.charted else " "
        return f"{mark} {one_line(self.name, width):<{width}} {number(self.value):>{VALUE_WIDTH}}"


def metric_rows(bank: TelemetryBank, charted: Collection[str] = ()) -> tuple[MetricRow, ...]:
    """Every open metric of `bank`, sorted by name, with its last value as sent."""
    return tuple(
        MetricRow(name, bank.metric_last(name), name in charted) for name in bank.metric_names()
    )


def name_filter(query: str) -> Callable[[str], bool]:
    """A test of a metric's name: `/regex/` (or `/regex`) searches a regex, anything else is a
    case-insensitive substring; blank matches all. ValueError names an invalid regex."""
    query = query.strip()
    if query.startswith("/") and len(query) > 1:
        pattern = query[1:-1] if query.endswith("/") and len(query) > 2 else query[1:]
        return compile_search(pattern, regex=True)
    return compile_search(query)


class MetricPicker(StyledOnFirstShow, ModalScreen[str | None]):
    """The metric list: dismissed with the picked name, or None (Escape)."""

    DEFAULT_CSS = """
    MetricPicker { align: center middle; }
    MetricPicker #metric-picker {
        width: 90%; max-width: 72; height: auto; max-height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    MetricPicker #metric-title { height: 1; text-style: bold; }
    MetricPicker #metric-filter { height: 1; border: none; padding: 0 1; background: $boost; }
    MetricPicker #metric-status { height: 1; color: $text-muted; }
    MetricPicker #metric-status.-error { color: $error; text-style: bold; }
    MetricPicker #metric-list { height: auto; max-height: 24; border: none; padding: 0; }
    """
    BINDINGS = [
        Binding(
            "escape",
            "close",
            "Close",
            tooltip="Close the list without a change",
            id="metric_picker.close",
        ),
        # Priority: the filter's Input has the keys and would take Enter (and hide it).
        Binding(
            "enter",
            "pick",
            "Chart/unchart",
            tooltip="Add or remove its chart",
            priority=True,
            id="metric_picker.pick",
        ),
        Binding("down", "move(1)", "Down", show=False, id="metric_picker.down"),
        Binding("up", "move(-1)", "Up", show=False, id="metric_picker.up"),
    ]

    def __init__(
        self,
        rows: Sequence[MetricRow],
        refused: int = 0,
        *,
        newer: Callable[[], tuple[Sequence[MetricRow], int]] | None = None,
    ) -> None:
        """`rows` and `refused` (names not kept) now; `newer`, if given, is asked for them
        again every second while the list is open (new metrics, newer values)."""
        super().__init__()
        self._rows = tuple(rows)
        self._refused = refused
        self._newer = newer
        self._shown: tuple[MetricRow, ...] = ()
        self._query = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="metric-picker"):
            yield Static(self._title(), id="metric-title", markup=False)
            yield SteadyInput(placeholder="filter: text, or /regex/", id="metric-filter")
            yield Static("", id="metric-status", markup=False)
            yield OptionList(id="metric-list")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._filter("")
        self.query_one("#metric-filter", Input).focus()
        if self._newer is not None:
            self.set_interval(REFRESH_S, self._refresh)

    def _refresh(self) -> None:
        if self._newer is not None:
            rows, refused = self._newer()
            self.update_rows(rows, refused=refused)

    def _title(self) -> str:
        n = len(self._rows)
        title = f"Metrics the run sends ({n})"
        if self._refused:
            title += f" · {self._refused} more not kept"
        return title

    def update_rows(self, rows: Sequence[MetricRow], *, refused: int = 0) -> None:
        """New rows (new metrics, newer values) under the same filter; the highlighted
        metric stays highlighted."""
        rows = tuple(rows)
        if rows == self._rows and refused == self._refused:
            return
        options = self.query_one("#metric-list", OptionList)
        index = options.highlighted
        name = self._shown[index].name if index is not None and index < len(self._shown) else None
        self._rows, self._refused = rows, refused
        self.query_one("#metric-title", Static).update(self._title())
        self._filter(self._query, keep=name)

    @on(Input.Changed, "#metric-filter")
    def _changed(self, event: Input.Changed) -> None:
        self._filter(event.value)

    def _filter(self, query: str, *, keep: str | None = None) -> None:
        status = self.query_one("#metric-status", Static)
        try:
            test = name_filter(query)
        except ValueError as exc:
            # The last good list stays: a half-typed regex does not empty it.
            status.update(str(exc))
            status.add_class("-error")
            return
        status.remove_class("-error")
        self._query = query
        self._shown = tuple(row for row in self._rows if test(row.name))
        options = self.query_one("#metric-list", OptionList)
        options.clear_options()
        options.add_options(Option(Content(row.text()), id=None) for row in self._shown)
        if self._shown:
            names = [row.name for row in self._shown]
            options.highlighted = names.index(keep) if keep in names else 0
        if not self._rows:
            status.update("no metrics{} from this run yet")
        elif not self._shown:
            status.update(f"nothing matches · {len(self._rows)} metrics")
        else:
            status.update(f"{len(self._shown)} of {len(self._rows)} · Enter charts or uncharts (✓)")

    def action_move(self, step: int) -> None:
        options = self.query_one("#metric-list", OptionList)
        if self._shown:
            current = options.highlighted or 0
            options.highlighted = max(0, min(len(self._shown) - 1, current + step))

    @on(OptionList.OptionSelected, "#metric-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._pick(event.option_index)

    def action_pick(self) -> None:
        index = self.query_one("#metric-list", OptionList).highlighted
        if index is not None:
            self._pick(index)

    def _pick(self, index: int) -> None:
        if 0 <= index < len(self._shown):
            self.dismiss(self._shown[index].name)

    def action_close(self) -> None:
        self.dismiss(None)
