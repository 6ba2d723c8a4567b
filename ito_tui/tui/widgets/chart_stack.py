"""All the telemetry panel's charts in one line-API widget: a partial repaint renders one widget.

Textual renders, for a partial repaint, every widget whose clip overlaps the repainted
rows, each from its first row to its last (lines it has cached come from its cache, but
each widget still costs its style walk and its cache's pass). The children of a
scrolling panel share the panel's clip, so one changed chart made all nine chart widgets
render (bench #4: `render_lines` of nine `TextSparkline`s per event). One widget drawing
all the charts is rendered once per repaint, and only its changed rows are drawn again
(Textual's line cache, kept exact by `refresh(Region)` of the cells that changed).

Each chart is as many rows high as the CSS says for the component class
`chart-stack--chart` (`PipelineScreen.-tall ChartStack > .chart-stack--chart { height: 3;
}`), so sizes stay in the stylesheets; the rows of one chart are those
`sparkline.chart_lines` draws, in the `sparkline--…` styles, as `TextSparkline` does.

One chart is highlighted (`highlighted`; up/down move it while the stack has focus, its
label drawn in `chart-stack--highlight`, which shows only under `:focus`); Enter or a click
on a chart posts `Open(key)` (the run screen opens the inspector on it). Moving the
highlight repaints the two labels it leaves and reaches, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ito_tui.state.views import ChartView

from .sparkline import (
    LABEL_WIDTH,
    SpanStyles,
    cells_key,
    changed_regions,
    chart_lines,
    chart_strip,
    chart_width,
)

_ROWS_CLASS = "chart-stack--chart"
_HIGHLIGHT_CLASS = "chart-stack--highlight"


class ChartStack(Widget):
    """Charts one under the other, each drawing the `ChartView` shown for its key."""

    DEFAULT_CSS = """
    ChartStack { height: auto; width: 1fr; }
    ChartStack > .chart-stack--chart { height: 2; }
    ChartStack > .sparkline--chart { color: $accent; }
    ChartStack > .sparkline--label { color: $text-muted; }
    ChartStack > .sparkline--value { text-style: bold; }
    ChartStack > .sparkline--nonfinite { color: $error; text-style: bold; }
    ChartStack > .sparkline--marker { color: $foreground; text-style: bold; }
    ChartStack > .sparkline--fault { color: $error; text-style: bold; }
    ChartStack > .sparkline--reference { color: $text-muted; }
    ChartStack > .sparkline--reference-in { color: $accent; text-style: reverse; }
    ChartStack > .chart-stack--highlight { }
    ChartStack:focus > .chart-stack--highlight { text-style: reverse bold; }
    """
    COMPONENT_CLASSES = {
        _ROWS_CLASS,
        _HIGHLIGHT_CLASS,
        "sparkline--chart",
        "sparkline--label",
        "sparkline--value",
        "sparkline--nonfinite",
        "sparkline--marker",
        "sparkline--fault",
        "sparkline--reference",
        "sparkline--reference-in",
    }

    can_focus = True

    BINDINGS = [
        Binding(
            "up",
            "highlight(-1)",
            "Chart up",
            id="charts.up",
            tooltip="Highlight the chart above",
            show=False,
        ),
        Binding(
            "down",
            "highlight(1)",
            "Chart down",
            id="charts.down",
            tooltip="Highlight the chart below",
            show=False,
        ),
        Binding(
            "enter",
            "open",
            "Inspect",
            id="charts.open",
            tooltip="Open the highlighted chart full-screen (the inspector)",
        ),
    ]

    class Open(Message):
        """Open chart `key` full-screen (Enter or a click on it)."""

        def __init__(self, stack: ChartStack, key: str) -> None:
            super().__init__()
            self.stack = stack
            self.key = key

        @property
        def control(self) -> ChartStack:
            return self.stack

    class Resized(Message):
        """The charts' width in columns changed: their views should be computed again."""

        def __init__(self, stack: ChartStack, width: int) -> None:
            super().__init__()
            self.stack = stack
            self.width = width

        @property
        def control(self) -> ChartStack:
            return self.stack

    def __init__(
        self, keys: Iterable[str] = (), *, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._keys: tuple[str, ...] = tuple(keys)
        self._views: dict[str, ChartView | None] = {}
        self._text: dict[str, list[str]] = {}
        """Each shown chart's rows as drawn (or about to be, once the repaint runs)."""
        self._cells: dict[str, tuple[tuple[object, ...], list[str]]] = {}
        """Each chart's columns and what they were drawn from (`cells_key`): a new view
        whose value moved but whose columns did not (most charts, most events) reuses them."""
        self._drawn_at = Size(0, 0)
        """The (content width, rows per chart) `_text` was drawn at."""
        self._width = 0
        """The chart width last announced by `Resized`."""
        self._rows = 2
        """Each chart's height in rows, as the CSS last said (`_css_rows`)."""
        self._styles = SpanStyles(self)
        self._pass = False
        """In a `render_lines` pass: `_base` is kept for its rows."""
        self._base: Style | None = None
        self._highlighted = 0
        self._highlight: tuple[object, Style] = (None, Style())

    @property
    def highlighted(self) -> str | None:
        """The key of the highlighted chart (None: no charts)."""
        keys = self._keys
        return keys[min(self._highlighted, len(keys) - 1)] if keys else None

    def highlight(self, key: str) -> None:
        """Highlight chart `key` (and scroll it into view); an unknown key is ignored."""
        if key in self._keys:
            self._move_to(self._keys.index(key))

    def action_highlight(self, by: int) -> None:
        if self._keys:
            self._move_to(max(0, min(len(self._keys) - 1, self._highlighted + by)))

    def action_open(self) -> None:
        key = self.highlighted
        if key is not None:
            self.post_message(self.Open(self, key))

    def on_click(self, event: events.Click) -> None:
        index = event.y // self.rows_per_chart()
        if 0 <= index < len(self._keys):
            self._move_to(index)
            self.post_message(self.Open(self, self._keys[index]))

    def _highlight_style(self, label: Style) -> Style:
        # A CSS lookup, kept while the label's style, the theme and the focus hold.
        key = (label, self.app.theme, self.has_focus)
        if self._highlight[0] != key:
            style = label + self.get_component_rich_style(_HIGHLIGHT_CLASS, partial=True)
            self._highlight = (key, style)
        return self._highlight[1]

    def _move_to(self, index: int) -> None:
        old, rows = min(self._highlighted, max(0, len(self._keys) - 1)), self.rows_per_chart()
        self._highlighted = index
        if old != index and self.is_mounted:
            # Only the labels change: the two charts' label columns.
            self.refresh(*(Region(0, i * rows, LABEL_WIDTH, rows) for i in (old, index)))
        parent = self.parent
        if self.is_mounted and isinstance(parent, Widget) and parent.is_scrollable:
            region = Region(0, index * rows, self.size.width, rows)
            parent.scroll_to_region(region.translate(self.virtual_region.offset), animate=False)

    @property
    def keys(self) -> tuple[str, ...]:
        """The charts drawn, top to bottom."""
        return self._keys

    @keys.setter
    def keys(self, keys: Iterable[str]) -> None:
        keys = tuple(keys)
        if keys != self._keys:
            self._keys = keys
            self.refresh(layout=True)

    def rows_per_chart(self) -> int:
        """Each chart's height in rows (the CSS of `.chart-stack--chart`)."""
        return self._rows

    def _css_rows(self) -> int:
        height = self.get_component_styles(_ROWS_CLASS).height
        self._rows = max(1, int(height.value)) if height is not None else 2
        return self._rows

    def chart_width(self) -> int:
        """How many columns each chart draws (at the widget's width)."""
        return chart_width(self.size.width)

    def view(self, key: str) -> ChartView | None:
        """The view last shown for chart `key` (None: none yet)."""
        return self._views.get(key)

    def chart_text(self, key: str) -> list[str]:
        """The rows chart `key` draws, as text ([] when it is not shown)."""
        if key not in self._keys:
            return []
        return list(self._lines(key, self._size_now()))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._keys) * self._css_rows()

    def on_resize(self, event: events.Resize) -> None:
        width = chart_width(event.size.width)
        if width != self._width:
            self._width = width
            self.post_message(self.Resized(self, width))

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> ChartStack:
        # A whole-widget refresh is what Textual does when the CSS of `.chart-stack--chart`
        # changes (a breakpoint class): a new chart height needs a layout too.
        if not regions and not layout and self.is_mounted:
            before = self._rows
            layout = self._css_rows() != before
        super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        return self

    def show(self, views: Mapping[str, ChartView]) -> None:
        """Draw these views (by key; other charts keep theirs), repainting only the
        cells that now draw something else."""
        self._views.update(views)
        if not self.is_mounted:
            return
        size = self._size_now()
        if size != self._drawn_at:
            self._text.clear()
            self._drawn_at = size
            self.refresh()
            return
        rows = size.height
        regions: list[Region] = []
        for index, key in enumerate(self._keys):
            if key not in views:
                continue
            old = self._text.get(key)
            new = self._text[key] = self._draw(views[key], key, size)
            changed = None if old is None else changed_regions(old, new)
            top = index * rows
            if changed is None:
                regions.append(Region(0, top, size.width, rows))
            else:
                regions.extend(region.translate((0, top)) for region in changed)
        if regions:
            self.refresh(*regions)

    def _draw(self, view: ChartView | None, key: str, size: Size) -> list[str]:
        if view is None:
            return chart_lines(None, size.width, size.height)
        columns = chart_width(size.width)
        cells_of = cells_key(view, columns, size.height)
        kept = self._cells.get(key)
        if kept is not None and kept[0] == cells_of:
            return chart_lines(view, size.width, size.height, kept[1])
        text = chart_lines(view, size.width, size.height)
        end = LABEL_WIDTH + columns
        self._cells[key] = (cells_of, [row[LABEL_WIDTH:end] for row in text])
        return text

    def _size_now(self) -> Size:
        return Size(self.size.width, self.rows_per_chart())

    def _lines(self, key: str, size: Size) -> list[str]:
        if size != self._drawn_at:
            self._text.clear()
            self._drawn_at = size
        text = self._text.get(key)
        if text is None:
            text = self._text[key] = self._draw(self._views.get(key), key, size)
        return text

    def render_lines(self, crop: Region) -> list[Strip]:
        # `rich_style` walks every ancestor's styles (~60 us, most of a row's cost): read
        # once per pass over the rows (if one row changed), not once per changed row.
        self._pass, self._base = True, None
        try:
            return super().render_lines(crop)
        finally:
            self._pass, self._base = False, None

    def render_line(self, y: int) -> Strip:
        """Row `y`: row `y % rows` of chart `y // rows` (Textual's line API)."""
        width = self.size.width
        rows = self.rows_per_chart()
        index, row = divmod(y, rows)
        base = self._base
        if base is None:
            base = self.rich_style
            if self._pass:
                self._base = base
        if index >= len(self._keys):
            return Strip.blank(width, base)
        text = self._lines(self._keys[index], Size(width, rows))
        styles = self._styles.over(base)
        strip = chart_strip(text[row], row, chart_width(width), styles)
        if index != min(self._highlighted, len(self._keys) - 1):
            return strip
        # The highlighted chart's label only (its second row's range shares the label's
        # style in `chart_strip`, and stays as it is).
        first, *rest = list(strip)
        label = Segment(first.text, self._highlight_style(styles[0]))
        return Strip([label, *rest], strip.cell_length)
