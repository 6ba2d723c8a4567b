"""The minimal Textual app every ito-tui figure is compared against.

Header, Footer, DataTable and Sparkline, written the obvious way: the sparkline
is fed a growing list and the table's live values go through `update_cell`.

    python bench/baseline_app.py idle     # paint once, then nothing
    python bench/baseline_app.py 1        # redraw sparkline + two table cells at 1 Hz
    python bench/baseline_app.py 10       # ... at 10 Hz

The header title `TITLE` is the "first frame painted" marker.
"""

from __future__ import annotations

import math
import sys

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, Header, Sparkline

TITLE = "ito-bench baseline"
ROWS = 12


class BaselineApp(App[None]):
    """Header, a 12-row DataTable, a 3-line Sparkline and a Footer."""

    TITLE = TITLE
    CSS = "Sparkline { height: 3; margin: 1 0; }"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, hz: float = 0.0) -> None:
        super().__init__()
        self.hz = hz
        self.ticks = 0
        self.values = [math.sin(i / 7) + 1.5 for i in range(600)]

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="table")
        yield Sparkline(list(self.values), id="spark")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("metric", key="metric")
        table.add_column("value", key="value")
        table.add_column("unit", key="unit")
        for i in range(ROWS):
            table.add_row(f"metric_{i}", f"{i * 1.5:.3f}", "u", key=f"r{i}")
        if self.hz > 0:
            self.set_interval(1.0 / self.hz, self.tick)

    def tick(self) -> None:
        self.ticks += 1
        value = math.sin(self.ticks / 5) + 1.5 + (self.ticks % 7) / 10
        self.values.append(value)
        # The naive way: hand the widget the whole history every time.
        self.query_one(Sparkline).data = list(self.values)
        table = self.query_one(DataTable)
        table.update_cell("r0", "value", f"{value:.4f}")
        table.update_cell("r1", "value", f"{self.ticks}")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    mode = args[0] if args else "idle"
    BaselineApp(0.0 if mode == "idle" else float(mode)).run()


if __name__ == "__main__":
    main()
