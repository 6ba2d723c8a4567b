"""FleetTable: the fleet's nodes, worst first, one row each (two below `MID` columns).

A line-API widget (`ScrollView.render_line`): it draws only the visible rows, scrolls for
128 nodes, and when a new snapshot comes it repaints only the cells that changed — per row,
the span from the first to the last changed column (bench #15: a refresh of 128 nodes × 8
GPUs writes a few KB to the terminal, not the screen).

A row: the state as glyph *and* word (`✗ failed`, `▲ straggler`, `↻ replaced`), the host,
step time p50 and p99 and their ratio to the fleet median, the 8 GPUs as compact cells —
utilisation as one block character (`▁` idle … `█` full) and the temperature in two
digits (`▆71`) — and the Xid / uncorrected-ECC / NCCL-timeout counts when any is non-zero.
Every text from the backend (host names) is made visible, never markup.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ito_tui.format import MISSING
from ito_tui.textsafe import visible

if TYPE_CHECKING:
    from ito_tui.state.fleet import FleetView, GpuCell, NodeRow

__all__ = [
    "BLOCKS",
    "MID",
    "WIDE",
    "FleetTable",
    "errors_text",
    "gpu_text",
    "header_lines",
    "layout",
    "node_lines",
]

STATE_WIDTH = 12
"""`▲ straggler ` (glyph, word, a space)."""
HOST_WIDTH = 15
"""A host name of 14 characters and a space (`b200-16n-ib-03`); longer ones are cut."""
MID = 12 + 15 + 5 + 6 + 1 + 24
"""From this width a node takes one row (state, host, p50, ratio, the 8 GPUs); below, two."""
WIDE = MID + 6 + 10
"""From this width the row adds p99 and room for the error counts."""
BLOCKS = "▁▂▃▄▅▆▇█"
"""Utilisation from 0 to 100 % in eight steps (`▁` also for idle: a blank would read as a
missing GPU)."""
HOT_C = 85.0
"""From this temperature a GPU's cell is drawn as a warning (thermal throttling starts in
the high 80s on H100/B200)."""
STATE_CLASSES = {
    "failed": "fleet--failed",
    "degraded": "fleet--warn",
    "straggler": "fleet--warn",
    "draining": "fleet--warn",
    "replaced": "fleet--replaced",
}


def gpu_text(cell: GpuCell) -> str:
    """`▆71`: utilisation as a block, the temperature in two digits (`99` caps it, so a
    cell is always three columns); `—` for a counter the backend does not report."""
    util = cell.util_frac
    if util is None or not math.isfinite(util):
        block = MISSING
    else:
        block = BLOCKS[min(len(BLOCKS) - 1, max(0, int(util * len(BLOCKS))))]
    temp = cell.temp_c
    if temp is None or not math.isfinite(temp):
        degrees = MISSING * 2
    else:
        degrees = f"{min(99, max(0, round(temp))):02d}"
    return f"{block}{degrees}"


def errors_text(row: NodeRow) -> str:
    """`xid 2 ecc 1 nccl 3`, only the non-zero counts (empty when all are zero)."""
    parts = [(n, v) for n, v in (("xid", row.xid), ("ecc", row.ecc), ("nccl", row.nccl)) if v]
    return " ".join(f"{name} {value:,}" for name, value in parts)


def _host(row: NodeRow) -> str:
    host = visible(row.hostname)
    return host if len(host) < HOST_WIDTH else host[: HOST_WIDTH - 2] + "…"


def layout(width: int) -> str:
    """`wide` (one row with p99 and the error counts), `mid` (one row: state, host, p50,
    ratio, GPUs) or `narrow` (two rows) for a table `width` columns wide."""
    if width >= WIDE:
        return "wide"
    return "mid" if width >= MID else "narrow"


def _silent_gpus(row: NodeRow) -> bool:
    return all(c.util_frac is None and c.temp_c is None for c in row.gpus)


def _gpus(row: NodeRow, styles: dict[str, Style]) -> Text:
    """The GPU cells; a node that reports no counter at all (a failed one) says so once,
    or shows its error counts there, instead of eight dashes."""
    cells = Text()
    if _silent_gpus(row):
        errors = errors_text(row)
        if errors:
            cells.append(errors.ljust(24), style=styles.get("fleet--failed"))
        else:
            cells.append(("no GPU counters" if row.gpus else "no GPUs").ljust(24), style="dim")
        return cells
    for cell in row.gpus:
        hot = cell.temp_c is not None and math.isfinite(cell.temp_c) and cell.temp_c >= HOT_C
        cells.append(gpu_text(cell), style=styles.get("fleet--hot") if hot else None)
    return cells


def node_lines(row: NodeRow, width: int, styles: dict[str, Style]) -> list[Text]:
    """The row (one line, or two in the `narrow` layout) for a table `width` wide."""
    mode = layout(width)
    state_style = styles.get(STATE_CLASSES.get(row.state, ""), Style())
    ratio_style = state_style if row.state == "straggler" else Style()
    # Styles as spans, never a Text's base style: `Text.render` (the line API's way in)
    # drops the base style of a text without spans, so a failed row drew white.
    head = Text(f"{row.glyph} {row.state}".ljust(STATE_WIDTH), end="")
    head.append(_host(row).ljust(HOST_WIDTH))
    head.append(f"{row.p50:>5}")
    if state_style:
        head.stylize_before(state_style, 0, len(head))
    errors = "" if _silent_gpus(row) else errors_text(row)  # else shown in the GPUs' place
    errors_style = styles.get("fleet--failed")
    if mode == "narrow":
        tail = Text("  ")
        tail.append_text(_gpus(row, styles))
        tail.append(f" {row.ratio:>5}", style=ratio_style)
        if errors:
            tail.append(f" {errors}", style=errors_style)
        return [head, tail]
    if mode == "wide":
        head.append(f" {row.p99:>5}")
    head.append(f" {row.ratio:>5}", style=ratio_style)
    head.append(" ")
    head.append_text(_gpus(row, styles))
    if errors:
        head.append(f" {errors}", style=errors_style)
    return [head]


def header_lines(width: int) -> list[str]:
    """The column names over `node_lines`."""
    mode = layout(width)
    head = f"{'state':<{STATE_WIDTH}}{'node':<{HOST_WIDTH}}{'p50':>5}"
    gpus = "GPU 0–7 util▁█+°C"
    if mode == "narrow":
        return [head, f"  {gpus:<24} {'×med':>5}"]
    if mode == "wide":
        head += f" {'p99':>5}"
    return [f"{head} {'×med':>5} {gpus}"]


class FleetTable(ScrollView, can_focus=False):
    """The node rows of a `FleetView` (the pane scrolls it with its keys)."""

    DEFAULT_CSS = """
    FleetTable { height: 1fr; scrollbar-size-vertical: 1; }
    FleetTable > .fleet--failed { color: $gate-failed; text-style: bold; }
    FleetTable > .fleet--warn { color: $warning; text-style: bold; }
    FleetTable > .fleet--replaced { color: $accent; }
    FleetTable > .fleet--hot { color: $warning; }
    """
    COMPONENT_CLASSES = {"fleet--failed", "fleet--warn", "fleet--replaced", "fleet--hot"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: tuple[NodeRow, ...] = ()
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}
        self._width = 0
        self._last_styles: dict[str, Style] = {}
        self.repainted_cells = 0
        """Cells marked for repaint since mounted (for tests: a refresh repaints little)."""

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def line_text(self, index: int) -> str:
        """The plain text of line `index` (for tests)."""
        return self._lines[index].plain

    def show(self, view: FleetView) -> None:
        """Draw `view`'s nodes; only what changed is repainted."""
        self._rows = view.nodes
        self._relines()

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._relines(full=True)

    def _styles(self) -> dict[str, Style]:
        return {name: self.get_component_rich_style(name) for name in self.COMPONENT_CLASSES}

    def _relines(self, *, full: bool = False) -> None:
        width = self.scrollable_content_region.width or self.size.width
        self._width = self.size.width
        styles = self._styles()
        if styles != self._last_styles:
            # The theme (or the first real styles after mount): every row changes colour.
            self._last_styles, full = styles, True
        lines = [line for row in self._rows for line in node_lines(row, width, styles)]
        old = self._lines
        self._lines = lines
        longest = max((line.cell_len for line in lines), default=0)
        self.virtual_size = Size(longest, len(lines))
        if full or len(old) != len(lines):
            self._strips.clear()
            self.refresh()
            self.repainted_cells += width * min(len(lines), self.size.height)
            return
        top, height = self.scroll_offset.y, self.size.height
        for y, (before, after) in enumerate(zip(old, lines, strict=True)):
            # `Text.__eq__` leaves out the base style: a row that only changed colour
            # (a node that failed with its text the same) must be drawn again.
            if before == after and before.style == after.style:
                continue
            self._strips.pop(y, None)
            if not top <= y < top + height:
                continue  # drawn when scrolled to
            span = changed_span(before, after)
            left = self.scroll_offset.x
            if span is not None and span[1] > left:
                x0, x1 = max(span[0], left), span[1]
                self.repainted_cells += x1 - x0
                self.refresh(Region(x0 - left, y - top, x1 - x0, 1))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(index)
        if strip is None:
            segments = list(self._lines[index].render(self.app.console))
            strip = Strip(Segment.apply_style(segments, self.rich_style))
            self._strips[index] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)


def _cells(text: Text) -> list[tuple[str, object]]:
    """Each character of `text` with every style that applies to it."""
    plain = text.plain
    styles: list[list[object]] = [[] for _ in plain]
    for span in text.spans:
        for i in range(span.start, min(span.end, len(plain))):
            styles[i].append(span.style)
    return [(ch, (text.style, tuple(st))) for ch, st in zip(plain, styles, strict=True)]


def changed_span(before: Text, after: Text) -> tuple[int, int] | None:
    """The columns [start, end) from the first to the last cell where two lines differ, in
    text or in style (None: they do not). One range per line, not one per changed run:
    Textual writes a line's update from the widget's left edge to the end of each region,
    so two regions on a line cost two prefixes (measured: 6.8 KB a refresh against 2.9 KB
    for one). A line with a wide character is one range over all of it."""
    if before.cell_len != len(before.plain) or after.cell_len != len(after.plain):
        return 0, max(before.cell_len, after.cell_len)
    a, b = _cells(before), _cells(after)
    blank: tuple[str, object] = ("", None)
    changed = [
        i
        for i in range(max(len(a), len(b)))
        if (a[i] if i < len(a) else blank) != (b[i] if i < len(b) else blank)
    ]
    return (changed[0], changed[-1] + 1) if changed else None
