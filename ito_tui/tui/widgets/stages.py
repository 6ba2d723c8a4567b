"""The stage list: all nine pipeline stages in order with state, progress, timing and gate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.contract import STAGE_ORDER, Stage
from ito_tui.format import integer

from .runfmt import (
    STATE_GLYPHS,
    STATE_WORDS,
    bar,
    count,
    duration,
    elapsed,
    pct,
    stage_label,
)

GATE_WORDS = {"passed": "gate✓", "failed": "gate✗", "running": "gate…", "pending": "gate·"}


def full_stage_list(stages: Sequence[Stage]) -> tuple[Stage, ...]:
    """All nine stages in pipeline order; any the run does not list yet are pending."""
    by_name = {str(s.name): s for s in stages}
    return tuple(by_name.get(n.value) or Stage(name=n) for n in STAGE_ORDER)


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

    # These three repaint through `_repaint_if_changed`: the pipeline assigns them on every
    # flush, and a repaint rewrites every row of the list to the terminal.
    stages: reactive[tuple[Stage, ...]] = reactive(tuple, always_update=True, repaint=False)
    """The run's stages (the list always shows all nine in order)."""
    current: reactive[str | None] = reactive(None, repaint=False)
    """The run's current stage name."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The latest event time: running stages' elapsed time is measured up to it."""
    cursor: reactive[int] = reactive(0, init=False)
    """Index of the selected stage."""

    @dataclass
    class StageSelected(Message):
        """The operator moved the selection to another stage."""

        name: str

    def watch_stages(self, stages: tuple[Stage, ...]) -> None:
        # Re-layout only when the height changes (a stage started or ended running).
        height = sum(3 if self._expanded(s) else 1 for s in full_stage_list(stages))
        if height != self._height:
            self._height = height
            self.refresh(layout=True)
        self._repaint_if_changed()

    def watch_current(self) -> None:
        self._repaint_if_changed()

    def watch_now(self, old: datetime | None, new: datetime | None) -> None:
        # `now` moves with every event, but only running stages' elapsed time shows it,
        # to the minute or second: most events leave the list as it is drawn.
        running = [s.started_at for s in self.stages if s.started_at and s.ended_at is None]
        if all(elapsed(t, old) == elapsed(t, new) for t in running):
            return
        self._repaint_if_changed()

    _height = 0
    _drawn: tuple[Size, int, tuple[str, ...]] | None = None

    def _draw_key(self) -> tuple[Size, int, tuple[str, ...]]:
        """What `render` would show, as plain text (styles follow from the same fields)."""
        width = max(20, self.content_region.width or self.size.width - 2)
        rows = [
            line.plain
            for i, stage in enumerate(full_stage_list(self.stages))
            for line in self._stage_lines(stage, width, i == self.cursor)
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
        """Move the selection to stage `name`."""
        for i, stage in enumerate(STAGE_ORDER):
            if stage.value == name:
                self.cursor = i

    def on_click(self, event: object) -> None:
        offset = getattr(event, "y", None)
        if offset is None:
            return
        row = 0
        for i, stage in enumerate(full_stage_list(self.stages)):
            rows = 3 if self._expanded(stage) else 1
            if row <= offset < row + rows:
                self.cursor = i
                return
            row += rows

    def _expanded(self, stage: Stage) -> bool:
        return str(stage.state) in ("running", "gate_eval") and stage.progress is not None

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return sum(3 if self._expanded(s) else 1 for s in full_stage_list(self.stages))

    def render(self) -> RenderableType:
        width = max(20, self.content_region.width or self.size.width - 2)
        lines: list[Text] = []
        for i, stage in enumerate(full_stage_list(self.stages)):
            lines.extend(self._stage_lines(stage, width, i == self.cursor))
        self._drawn = (self.size, self.cursor, tuple(line.plain for line in lines))
        return Text("\n").join(lines)

    def _stage_lines(self, stage: Stage, width: int, selected: bool) -> list[Text]:
        state = str(stage.state)
        style = (
            self.get_component_rich_style(f"stages--{state}", partial=True)
            if (f"stages--{state}" in self.COMPONENT_CLASSES)
            else None
        )
        glyph = STATE_GLYPHS.get(state, "?")
        word = STATE_WORDS.get(state, state)
        marker = "›" if str(stage.name) == self.current else " "
        took = elapsed(stage.started_at, stage.ended_at or self.now)
        gate = ""
        if stage.gate is not None:
            gate = GATE_WORDS.get(str(stage.gate.status), f"gate {stage.gate.status}")
        head = f"{marker}{glyph} {stage_label(stage.name):<12} {word:<9}"
        tail = f"{took:>5} {gate}".rstrip()
        line = Text(f"{head} {tail}"[:width].ljust(width), style=style or "")
        if selected:
            line.stylize(self.get_component_rich_style("stages--cursor", partial=True))
        out = [line]
        if self._expanded(stage) and stage.progress is not None:
            out.extend(Text(line, style=style or "") for line in self._progress_lines(stage, width))
        return out

    @staticmethod
    def _progress_lines(stage: Stage, width: int) -> list[str]:
        p = stage.progress
        assert p is not None
        eta = f" {pct(p.frac)}" + (f" ETA {duration(p.eta_s)}" if p.eta_s is not None else "")
        bar_line = f"   {bar(p.frac, max(4, width - 3 - len(eta)))}{eta}"
        amount = f"{count(p.tokens)}/{count(p.total_tokens)} tok"
        if p.total_steps:
            amount = f"step {integer(p.step)}/{integer(p.total_steps)} · {amount}"
        return [bar_line[:width], f"   {amount}"[:width]]
