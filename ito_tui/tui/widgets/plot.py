"""`InspectorPlot`: the chart inspector's plot, a line-API widget drawing an `InspectorView`.

What it draws and why braille: `plot_text`. The widget keeps the rows of the view it was
last given at its size (`show`), maps each run's style name to its `plot--…` component
style, and posts `Resized` when its plot's width in columns changes (the view is
computed for that width) and `Clicked` with the plot column a click fell in (the cursor
goes there). Plain ASCII (`plot_text`'s `plain`) under a theme of the terminal's 16
colours (`ito-ansi`, `Theme.ansi`) or NO_COLOR.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ito_tui.state.inspect import InspectorView

from .plot_text import FIXED_ROWS, READOUT_ROWS, Y_WIDTH, Run, plot_columns, plot_lines

__all__ = ["InspectorPlot"]

_NAMES = ("band", "line", "ema", "ref", "gap", "axis", "text", "readout", "nonfinite", "marker",
          "fault", "cursor")  # fmt: skip


class InspectorPlot(Widget):
    """The inspector's plot: readout, plot, marker row, x ticks and legend."""

    DEFAULT_CSS = """
    InspectorPlot { height: 1fr; width: 1fr; }
    InspectorPlot > .plot--band { color: $accent 45%; }
    InspectorPlot > .plot--line { color: $accent; }
    InspectorPlot > .plot--ema { color: $warning; text-style: bold; }
    InspectorPlot > .plot--ref { color: $secondary; }
    InspectorPlot > .plot--gap { color: $foreground 20%; }
    InspectorPlot > .plot--axis { color: $text-muted; }
    InspectorPlot > .plot--text { }
    InspectorPlot > .plot--readout { text-style: bold; }
    InspectorPlot > .plot--nonfinite { color: $error; text-style: bold; }
    InspectorPlot > .plot--marker { color: $foreground; text-style: bold; }
    InspectorPlot > .plot--fault { color: $error; text-style: bold; }
    InspectorPlot > .plot--cursor { text-style: reverse; }
    """
    COMPONENT_CLASSES = {f"plot--{name}" for name in _NAMES}

    class Resized(Message):
        """The plot's width in columns changed: its view should be computed again."""

        def __init__(self, plot: InspectorPlot, columns: int) -> None:
            super().__init__()
            self.plot = plot
            self.columns = columns

        @property
        def control(self) -> InspectorPlot:
            return self.plot

    class Clicked(Message):
        """A click on plot column `column` (the cursor goes there)."""

        def __init__(self, plot: InspectorPlot, column: int) -> None:
            super().__init__()
            self.plot = plot
            self.column = column

        @property
        def control(self) -> InspectorPlot:
            return self.plot

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._view: InspectorView | None = None
        self._rows: list[list[Run]] = []
        self._drawn: tuple[InspectorView | None, Size, bool] | None = None
        self._columns = 0
        self._styles: dict[str, Style] = {}
        self._styles_key: tuple[Style, str] | None = None
        self._pass: tuple[Size, Style] | None = None
        """(size, base style) during a `render_lines` pass."""

    @property
    def view(self) -> InspectorView | None:
        return self._view

    @property
    def plain(self) -> bool:
        """Whether the plot draws in ASCII (a 16-colour theme, or NO_COLOR)."""
        return bool(getattr(self.app.current_theme, "ansi", False) or self.app.no_color)

    def columns(self) -> int:
        """How many columns the plot draws at the widget's width."""
        return plot_columns(self.size.width)

    def plot_rows(self) -> int:
        """How many rows the plot itself draws at the widget's height."""
        return max(1, self.size.height - FIXED_ROWS)

    def show(self, view: InspectorView | None) -> None:
        """Draw `view` (computed for `columns()` columns)."""
        self._view = view
        self.refresh()

    def text(self) -> list[str]:
        """The rows as drawn, as plain text (for tests and the screen's readout)."""
        return ["".join(t for t, _ in row) for row in self._current(self.size)]

    def on_resize(self, event: events.Resize) -> None:
        columns = plot_columns(event.size.width)
        if columns != self._columns:
            self._columns = columns
            self.post_message(self.Resized(self, columns))
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        column = event.x - Y_WIDTH
        if 0 <= column < self.columns() and event.y >= READOUT_ROWS:
            self.post_message(self.Clicked(self, column))

    def _current(self, size: Size) -> list[list[Run]]:
        plain = self.plain
        key = (self._view, size, plain)
        if self._drawn is None or self._drawn[0] is not key[0] or self._drawn[1:] != key[1:]:
            self._rows = plot_lines(self._view, size.width, size.height, plain=plain)
            self._drawn = key
        return self._rows

    def _style(self, name: str, base: Style) -> Style:
        """The style of run style `name` over `base` (kept while the base and the theme
        hold: `_styles_for`)."""
        style = self._styles.get(name)
        if style is None:
            # The layer's whole style (its colour blended: a partial one drops the alpha
            # of `$accent 45%`), then the cursor's own attributes over it.
            layer, *over = name.split("|")
            style = base + self.get_component_rich_style(f"plot--{layer}")
            for part in over:
                style += self.get_component_rich_style(f"plot--{part}", partial=True)
            self._styles[name] = style
        return style

    def _styles_for(self, base: Style) -> None:
        key = (base, self.app.theme)
        if key != self._styles_key:
            self._styles_key, self._styles = key, {}

    def render_lines(self, crop: Region) -> list[Strip]:
        # `size` walks the layout and `rich_style` every ancestor's styles: once per pass
        # over the rows, not once per row (34 rows a frame at 120x36).
        self._pass = (self.size, self.rich_style)
        self._styles_for(self._pass[1])
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        if self._pass is None:
            self._styles_for(self.rich_style)
        size, base = self._pass if self._pass is not None else (self.size, self.rich_style)
        rows = self._current(size)
        if y >= len(rows):
            return Strip.blank(size.width, base)
        # Plain text segments: a mark's label or a metric's name is never markup.
        segments = [Segment(text, self._style(style, base)) for text, style in rows[y] if text]
        return Strip(segments, size.width)
