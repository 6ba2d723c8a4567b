"""The job log's lines as a line-API widget: only the rows on screen are ever drawn.

`LogView` draws what a `LineSource` (a `state.LogBuffer`) holds, one row per line,
newest at the bottom. It never copies the lines: the pane tells it when the source
changed (`sync`, at most 5 times a second) and how many lines left at the top
(evicted by the ring) or came in above (a scrollback page), so a paused view stays on
the lines the operator reads while the ring moves under it. Drawing a row costs the
same with 20 lines held or 20,000 (`render_line` formats one line, cached by line).

Following: the view sticks to the newest line until the operator scrolls up (a key,
the wheel or the scrollbar), then says so (`on_follow`, called at once: a message
bubbling to the pane reached the screen a frame after the rows, and the caption
"following" showed ~33 ms after End); End, or scrolling back down to the newest line,
follows again. Every text is already inert
(`textsafe.log_text` in the buffer) and drawn as segments (`log_rows`), never markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ito_tui.tui.widgets.log_rows import row_segments, search_spans

if TYPE_CHECKING:
    from ito_tui.state.logbuffer import ShownLine

__all__ = ["LineSource", "LogView"]

COLUMNS_STEP = 8
"""Columns left/right scroll a long line by."""
CONTEXT_ROWS = 3
"""Rows shown above a line the view is asked to show (a match, a fault's time)."""


class LineSource(Protocol):
    """What the view reads of a `state.LogBuffer`."""

    def __len__(self) -> int: ...

    def line(self, i: int) -> ShownLine: ...


class LogView(ScrollView, can_focus=True):
    """The lines of a `LineSource`, newest at the bottom, following until scrolled up."""

    DEFAULT_CSS = """
    LogView { height: 1fr; overflow-x: auto; overflow-y: auto; padding: 0 0 0 1;
        scrollbar-size-horizontal: 0; }
    LogView > .logview--prefix { color: $text-muted; }
    LogView > .logview--debug { color: $text-muted; }
    LogView > .logview--warning { color: $warning; }
    LogView > .logview--error { color: $gate-failed; text-style: bold; }
    LogView > .logview--match { background: $warning 40%; text-style: bold; }
    LogView > .logview--current { background: $boost; text-style: reverse; }
    """
    COMPONENT_CLASSES = {
        "logview--prefix",
        "logview--debug",
        "logview--warning",
        "logview--error",
        "logview--match",
        "logview--current",
    }

    BINDINGS = [
        Binding("up,k", "rows(-1)", "Up", show=False, id="logs.up", tooltip="Older line"),
        Binding("down,j", "rows(1)", "Down", show=False, id="logs.down", tooltip="Newer line"),
        Binding("pageup", "pages(-1)", "Older", show=False, id="logs.page_up", tooltip="Older"),
        Binding("pagedown", "pages(1)", "Newer", show=False, id="logs.page_down", tooltip="Newer"),
        Binding("home", "oldest", "Oldest", show=False, id="logs.home", tooltip="Oldest held"),
        Binding("end", "follow", "Follow", id="logs.follow", tooltip="Follow the newest lines"),
        Binding("left", "columns(-1)", "Left", show=False, id="logs.left", tooltip="Scroll left"),
        Binding(
            "right", "columns(1)", "Right", show=False, id="logs.right", tooltip="Scroll right"
        ),
    ]

    @dataclass
    class ReachedTop(Message):
        """The operator scrolled to the oldest line held: older ones may be fetched."""

        view: LogView

        @property
        def control(self) -> LogView:
            return self.view

    def __init__(
        self,
        source: LineSource,
        *,
        on_follow: Callable[[bool], None] | None = None,
        on_scroll: Callable[[], None] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.source = source
        self.on_follow = on_follow
        """Called when following starts (True) or stops (False), in the same turn."""
        self.on_scroll = on_scroll
        """Called when the operator moved the view (the lines at its top changed)."""
        self.following = True
        """Whether the view sticks to the newest line."""
        self.needle = ""
        self.pattern: re.Pattern[str] | None = None
        """The search as a regex (`/…/`), when it is one."""
        """The search text: its matches are highlighted (case-insensitive)."""
        self.current: int | None = None
        """The index of the line marked (the search hit, the line at a fault's time)."""
        self._moving = False
        """True while the view moves itself (following, a shift): not the operator."""
        self._anchor: int | None = None
        self._around = False
        """A line `show_line` still has to bring on screen (the view had no size yet, or
        not the lines below it)."""
        self._width = 0
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(64)
        self._styles: dict[str, Style] = {}

    # ------------------------------------------------------------ what the pane calls

    def set_source(self, source: LineSource) -> None:
        """Show another buffer (a new filter, a jump far back): nothing marked."""
        self.source = source
        self.current = self._anchor = None
        self._cache.clear()
        self.sync()

    def sync(self, *, shift: int = 0) -> None:
        """The source changed: `shift` lines were added above (negative: evicted at the
        top), so a paused view moves by as much and stays on the same lines."""
        if shift and self.current is not None:
            moved = self.current + shift
            self.current = moved if moved >= 0 else None
        if shift and self._anchor is not None:
            self._anchor = max(0, self._anchor + shift)
        self._moving = True
        try:
            self.virtual_size = Size(max(self._width, self.size.width), len(self.source))
            if self.following:
                self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)
            elif shift:
                self.scroll_to(
                    y=max(0, self.scroll_y + shift), animate=False, immediate=True, force=True
                )
        finally:
            self._moving = False
        self._to_anchor()
        self.refresh()

    def set_following(self, following: bool) -> None:
        """Follow the newest line (End) or stay where the view is; says so if it changed."""
        if following == self.following:
            return
        self.following = following
        if following:
            self.current = self._anchor = None
            self.sync()
        if self.on_follow is not None:
            self.on_follow(following)

    def show_line(self, index: int, *, around: bool = False) -> None:
        """Stop following and show line `index` marked, a few rows below the top (a third
        of the view `around` a time, so what led to it shows too), as soon as the view has
        a size and holds the lines below it."""
        self.set_following(False)
        self.current = index
        self._anchor = index
        self._around = around
        self._to_anchor()
        self.refresh()

    def _to_anchor(self) -> None:
        anchor = self._anchor
        if anchor is None or not self.size.height:
            return
        rows = max(CONTEXT_ROWS, self.scrollable_content_region.height // 3)
        target = max(0, anchor - (rows if self._around else CONTEXT_ROWS))
        self._moving = True
        try:
            self.scroll_to(y=target, animate=False, immediate=True, force=True)
        finally:
            self._moving = False
        if self.scroll_y >= target:
            self._anchor = None

    def set_needle(self, needle: str, pattern: re.Pattern[str] | None = None) -> None:
        """Highlight `needle` (case-insensitive), or what `pattern` matches (a regex)."""
        self.needle = needle
        self.pattern = pattern
        self._cache.clear()
        self.refresh()

    @property
    def top_index(self) -> int:
        """The index of the first line on screen."""
        return int(self.scroll_y)

    @property
    def bottom_index(self) -> int:
        """The index of the last line on screen (or the last line held)."""
        rows = max(1, self.scrollable_content_region.height)
        return max(0, min(len(self.source), self.top_index + rows) - 1)

    # ------------------------------------------------------------ the operator's scrolling

    def action_rows(self, delta: int) -> None:
        self._scroll_by(delta)

    def action_pages(self, delta: int) -> None:
        self._scroll_by(delta * max(1, self.scrollable_content_region.height - 1))

    def action_columns(self, delta: int) -> None:
        # A long line (a traceback's, NCCL's) is read sideways, a word at a time.
        step = COLUMNS_STEP * delta
        self.scroll_to(x=max(0, self.scroll_x + step), animate=False, immediate=True, force=True)

    def action_oldest(self) -> None:
        self._scroll_by(-len(self.source))

    def action_follow(self) -> None:
        self.set_following(True)

    def _scroll_by(self, delta: int) -> None:
        if delta < 0:
            # Up is the operator's "let me read": it pauses even before the view can move
            # (a burst not painted yet, a log shorter than the view).
            self.set_following(False)
        self._moving = True
        try:
            self.scroll_to(y=self.scroll_y + delta, animate=False, immediate=True, force=True)
        finally:
            self._moving = False
        self._anchor = None
        if delta < 0 and self.scroll_y <= 0:
            self.post_message(self.ReachedTop(self))
        elif delta > 0 and self.scroll_y >= self.max_scroll_y and not self.following:
            self.set_following(True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._moving:
            return
        self._anchor = None
        if self.on_scroll is not None:
            self.on_scroll()
        # The operator moved (a key, the wheel, the scrollbar): up pauses, reaching the
        # newest line again follows, as a terminal's scrollback does.
        if new_value < old_value and self.following:
            self.set_following(False)
        elif new_value > old_value and not self.following and new_value >= self.max_scroll_y:
            self.set_following(True)

    # ------------------------------------------------------------ drawing

    def on_resize(self) -> None:
        self._cache.clear()
        # Two screens of rows: a paused view redraws from the cache, and a strip held
        # longer only keeps Textual's crops and divisions of it alive (256 rows held
        # ~1,800 strips, 2.5 MB, in bench 18.13's flood).
        self._cache.maxsize = max(16, 2 * self.size.height)
        self.sync()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        self._styles.clear()

    def _base(self) -> Style:
        """The widget's own style, looked up once per style change, not once a row (the
        lookup walks the CSS: it was most of a row's cost in a flood)."""
        style = self._styles.get("")
        if style is None:
            style = self._styles[""] = self.rich_style
        return style

    def _part(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name, partial=True)
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        style = self._base()
        if index >= len(self.source):
            return Strip.blank(width, style)
        line = self.source.line(index)
        key = (line, index == self.current, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._strip(line, index == self.current, width)
            self._cache[key] = strip
        if scroll_x == 0 and strip.cell_length == width:
            return strip  # already the row's width: no second strip for the crop
        return strip.crop_extend(scroll_x, scroll_x + width, style)

    def _strip(self, line: ShownLine, current: bool, width: int) -> Strip:
        """One row (`log_rows.row_segments`), padded to `width` when shorter."""
        base = self._base()
        extra = self._part("logview--current") if current else None

        def styled(name: str | None, match: bool) -> Style:
            key = f"{name}|{match}|{current}"
            style = self._styles.get(key)
            if style is None:
                style = base + self._part(name) if name else base
                if match:
                    style += self._part("logview--match")
                if extra is not None:
                    style += extra
                self._styles[key] = style
            return style

        spans = search_spans(line.text, self.needle, self.pattern)
        segments, length = row_segments(line, width, spans, styled)
        if length > self._width:
            self._width = length
        if length < width:
            # The widget's own colours to the row's end (the reverse bar of the marked line).
            segments.append(Segment(" " * (width - length), styled(None, False)))
            return Strip(segments, width)
        return Strip(segments, length)
