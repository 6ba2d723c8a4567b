"""The stage list: all nine pipeline stages in order with state, progress, timing and gate.

It draws the run tracker's `StageView`s (`state.views.stage_views`: each status derived
from the spec and the run, paused while the run waits) and their step and ETA in the
words the detail pane and the run strip use (`format.progress_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.contract import STAGE_ORDER
from ito_tui.format import count, percent, progress_text, stage_label, status_label
from ito_tui.state.projection import Projection
from ito_tui.state.views import UNDER_WAY, StageView

from .runfmt import STATE_GLYPHS, bar, elapsed

GATE_WORDS = {"passed": "gate✓", "failed": "gate✗", "running": "gate…", "pending": "gate·"}
WORD_WIDTH = 9
"""The widest status word column (`gate eval`, `cancelled`)."""
EXPANDED = UNDER_WAY
"""Statuses whose stage shows its progress bar and step under its line."""


def expanded(view: StageView) -> bool:
    """Whether the stage takes three rows (its progress under its line)."""
    return view.status in EXPANDED and (view.step is not None or view.tokens is not None)


def fraction(view: StageView) -> float | None:
    """How far the stage is: the backend's own fraction, else tokens (what it plans in),
    else steps. Never a division that overflows: a hostile count past its total is done."""
    p = view.stage.progress if view.stage is not None else None
    if p is not None and p.frac is not None:
        return p.frac
    for done, total in ((view.tokens, view.total_tokens), (view.step, view.total_steps)):
        if done is not None and total:
            return done / total if done <= total else 1.0
    return None


def progress_lines(view: StageView, width: int) -> list[str]:
    """The bar with percent, then `step 23,484/30,632 · ETA 3h52m · 16.1B/40B tok`."""
    frac = fraction(view)
    head = f" {percent(frac)}" if frac is not None else ""
    bar_line = f"   {bar(frac or 0.0, max(4, width - 3 - len(head)))}{head}"
    return [bar_line[:width], f"   {amount_text(view, width - 3)}"[:width]]


def projection_lines(proj: Projection | None, width: int) -> list[tuple[str, bool]]:
    """The projection under the current stage, as (text, warned) rows `width` wide:
    `finish ~Dec 3 14:20 UTC (p90 Dec 4 02:00 UTC)` and `spend ~$28.1K (p90 $31.0K)`, the
    finish's p90 on a row of its own where it does not fit; a p90 past the booking's end
    or over the budget is marked `⚠` (the header says which in words)."""
    if proj is None or not proj.words:
        return []
    if not proj.known:
        return [(f"   {proj.words}"[:width], False)]
    rows: list[tuple[str, bool]] = []
    for part in proj.words.split(" · "):
        warned = proj.late if part.startswith("finish") else proj.over
        lead = " ⚠ " if warned else "   "
        if len(lead) + len(part) <= width or " (p90 " not in part:
            rows.append((f"{lead}{part}"[:width], warned))
            continue
        head, tail = part.split(" (p90 ", 1)
        rows.append((f"{lead}{head}"[:width], warned))
        rows.append((f"     p90 {tail.rstrip(')')}"[:width], warned))
    return rows


def amount_text(view: StageView, width: int = 1000) -> str:
    """`step 23,484/30,632 · ETA 3h52m · 16.1B/40B tok` in `width` cells: the tokens only
    where they fit whole. The stage list's second progress row and the detail pane's
    progress line, in the same words by construction."""
    if view.status not in EXPANDED:
        view = replace(view, eta_s=None)  # a stage that is over, or not begun, has no ETA
    amount = progress_text(view) if view.step is not None else ""
    if view.tokens is not None:
        tokens = f"{count(view.tokens)}/{count(view.total_tokens)} tok"
        longer = f"{amount} · {tokens}" if amount else tokens
        if len(longer) <= width or not amount:
            amount = longer
    return amount


class StageList(Widget, can_focus=True):
    """All stages in order; each shows glyph and word, progress, elapsed and gate verdict."""

    DEFAULT_CSS = """
    StageList {
        height: auto;
        min-height: 9;
        padding: 0 1;
    }
    StageList > .stages--passed { color: $gate-passed; }
    StageList > .stages--failed { color: $gate-failed; text-style: bold; }
    StageList > .stages--running { color: $accent; text-style: bold; }
    StageList > .stages--gate_eval { color: $warning; text-style: bold; }
    StageList > .stages--pending { color: $text-muted; }
    StageList > .stages--skipped { color: $text-muted; text-style: italic; }
    StageList > .stages--cancelled { color: $text-muted; }
    StageList > .stages--cursor { background: $boost; }
    StageList > .stages--warned { color: $warning; text-style: bold; }
    StageList > .stages--projection { color: $text-muted; }
    StageList:focus > .stages--cursor { text-style: reverse; }
    """

    COMPONENT_CLASSES = {
        "stages--passed",
        "stages--failed",
        "stages--running",
        "stages--gate_eval",
        "stages--pending",
        "stages--skipped",
        "stages--cancelled",
        "stages--cursor",
        "stages--warned",
        "stages--projection",
    }

    BINDINGS = [
        Binding(
            "up,k",
            "cursor(-1)",
            "Prev stage",
            show=False,
            id="stages.up",
            tooltip="Select the previous stage",
        ),
        Binding(
            "down,j",
            "cursor(1)",
            "Next stage",
            show=False,
            id="stages.down",
            tooltip="Select the next stage",
        ),
    ]

    # These three repaint through `_repaint_if_changed`: the screen assigns them on every
    # repaint of the run (equal views do nothing), and a repaint rewrites every row of the
    # list to the terminal.
    views: reactive[tuple[StageView, ...]] = reactive(tuple, repaint=False)
    """Every stage of the pipeline in order (`RunTracker.stages()`)."""
    current: reactive[str | None] = reactive(None, repaint=False)
    """The run's current stage name."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The latest event time: running stages' elapsed time is measured up to it."""
    cursor: reactive[int] = reactive(0, init=False)
    """Index of the selected stage."""
    projection: reactive[Projection | None] = reactive(None, repaint=False)
    """The run's projected finish and spend (`RunTracker.projection`), drawn under the
    current stage."""

    @dataclass
    class StageSelected(Message):
        """The operator moved the selection to another stage."""

        name: str

    def watch_views(self, views: tuple[StageView, ...]) -> None:
        # Re-layout only when the height changes (a stage started or ended running).
        self._relayout_if_taller()
        self._repaint_if_changed()

    def watch_current(self) -> None:
        self._relayout_if_taller()
        self._repaint_if_changed()

    def watch_projection(self, old: Projection | None, new: Projection | None) -> None:
        # The projection moves with every telemetry sample; the rows drawn of it (to the
        # minute, amounts rounded) change far less often. Comparing those rows costs a
        # tenth of comparing the whole list (`_draw_key`: every stage's rows), which was
        # half a millisecond of each live event (bench #4).
        width = self._width() if self.is_mounted else 0
        if width and projection_lines(old, width) == projection_lines(new, width):
            return
        self._relayout_if_taller()
        self._repaint_if_changed()

    def _relayout_if_taller(self) -> None:
        height = self._rows(self.views)
        if height != self._height:
            self._height = height
            self.refresh(layout=True)

    def watch_now(self, old: datetime | None, new: datetime | None) -> None:
        # `now` moves with every event, but only running stages' elapsed time shows it,
        # to the minute or second: most events leave the list as it is drawn.
        running = [
            v.stage.started_at
            for v in self.views
            if v.stage is not None and v.stage.started_at and v.stage.ended_at is None
        ]
        if all(elapsed(t, old) == elapsed(t, new) for t in running):
            return
        self._repaint_if_changed()

    _height = 0
    _drawn: tuple[Size, int, tuple[str, ...]] | None = None

    def _draw_key(self) -> tuple[Size, int, tuple[str, ...]]:
        """What `render` would show, as plain text (styles follow from the same fields)."""
        width = max(20, self.content_region.width or self.size.width - 2)
        columns = self._columns(width)
        rows = [
            line.plain
            for i, view in enumerate(self.views)
            for line in self._stage_lines(view, width, i == self.cursor, columns)
        ]
        return (self.size, self.cursor, tuple(rows))

    def _repaint_if_changed(self) -> None:
        """Repaint the rows whose text changed (a progress event changes two of eleven)."""
        if not self.is_mounted:
            return
        key, drawn = self._draw_key(), self._drawn
        if drawn == key:
            return
        if drawn is None or drawn[:2] != key[:2] or len(drawn[2]) != len(key[2]):
            self.refresh()
            return
        rows = zip(drawn[2], key[2], strict=True)
        self.refresh(*(Region(0, y, self.size.width, 1) for y, (a, b) in enumerate(rows) if a != b))

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(STAGE_ORDER) - 1, self.cursor + delta))

    def watch_cursor(self, value: int) -> None:
        self.post_message(self.StageSelected(STAGE_ORDER[value].value))

    def select(self, name: str) -> None:
        """Move the selection to stage `name`, as the operator would (a `StageSelected`)."""
        for i, stage in enumerate(STAGE_ORDER):
            if stage.value == name:
                self.cursor = i

    def follow(self, name: str) -> None:
        """Move the cursor to stage `name`, the run's current one, without a
        `StageSelected`: the screen following the current stage must not hear its own move
        as the operator's choice. Handled after the run had moved on to the next stage, that
        message stopped the following (the detail stayed on a stage that was over)."""
        for i, stage in enumerate(STAGE_ORDER):
            if stage.value == name and i != self.cursor:
                self.set_reactive(StageList.cursor, i)
                self._repaint_if_changed()

    def on_click(self, event: object) -> None:
        offset = getattr(event, "y", None)
        if offset is None:
            return
        row = 0
        for i, view in enumerate(self.views):
            rows = self._view_rows(view)
            if row <= offset < row + rows:
                self.cursor = i
                return
            row += rows

    def _width(self) -> int:
        return max(20, self.content_region.width or self.size.width - 2)

    def _projection_rows(self, view: StageView) -> list[tuple[str, bool]]:
        if view.name != self.current or not expanded(view):
            return []
        return projection_lines(self.projection, self._width())

    def _view_rows(self, view: StageView) -> int:
        if not expanded(view):
            return 1
        return 3 + len(self._projection_rows(view))

    def _rows(self, views: tuple[StageView, ...]) -> int:
        return max(len(STAGE_ORDER), sum(self._view_rows(v) for v in views))

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return self._rows(self.views)

    def render(self) -> RenderableType:
        width = max(20, self.content_region.width or self.size.width - 2)
        lines: list[Text] = []
        columns = self._columns(width)
        for i, view in enumerate(self.views):
            lines.extend(self._stage_lines(view, width, i == self.cursor, columns))
        self._drawn = (self.size, self.cursor, tuple(line.plain for line in lines))
        return Text("\n").join(lines)

    def _took(self, view: StageView) -> str:
        stage = view.stage
        return "" if stage is None else elapsed(stage.started_at, stage.ended_at or self.now)

    def _columns(self, width: int) -> tuple[int, int]:
        """The status word's and the time's column widths: as wide as the widest of this
        list, so `17h13m gate✓` keeps its verdict in a 39-column pane (fixed at 9 and 5
        the verdict was cut off a six-character time). Where the pane is too narrow for
        the widest word and a verdict after the widest time (80×24: `recovering`,
        `cancelled` or `gate eval` beside a `17h13m gate✓`), the word column narrows to
        what fits, down to `passed`'s: a wider word then pushes only its own row's time."""
        words = max((len(status_label(v.status)) for v in self.views), default=7)
        took = max(5, max((len(self._took(v)) for v in self.views), default=5))
        # An odd word from the backend widens its own row only, not every row's column.
        room = width - len(f"›▶ {'':<12}  {'':>{took}} gate✓")
        return max(len("passed"), min(words, WORD_WIDTH, room)), took

    def _stage_lines(
        self, view: StageView, width: int, selected: bool, columns: tuple[int, int]
    ) -> list[Text]:
        state = view.status
        # A paused or recovering stage is drawn as running (its word and glyph say which).
        css = "running" if state in ("paused", "recovering") else state
        style = (
            self.get_component_rich_style(f"stages--{css}", partial=True)
            if (f"stages--{css}" in self.COMPONENT_CLASSES)
            else None
        )
        glyph = STATE_GLYPHS.get(state, "?")
        word = status_label(state)
        marker = "›" if view.name == self.current else " "
        word_w, took_w = columns
        gate = ""
        if view.gate is not None:
            gate = GATE_WORDS.get(str(view.gate.status), f"gate {view.gate.status}")
        head = f"{marker}{glyph} {stage_label(view.name):<12} {word:<{word_w}}"
        tail = f"{self._took(view):>{took_w}} {gate}".rstrip()
        line = Text(f"{head} {tail}"[:width].ljust(width), style=style or "")
        if selected:
            line.stylize(self.get_component_rich_style("stages--cursor", partial=True))
        out = [line]
        if expanded(view):
            out.extend(Text(row, style=style or "") for row in progress_lines(view, width))
            warned = self.get_component_rich_style("stages--warned", partial=True)
            muted = self.get_component_rich_style("stages--projection", partial=True)
            for text, warn in self._projection_rows(view):
                out.append(Text(text, style=warned if warn else muted))
        return out
