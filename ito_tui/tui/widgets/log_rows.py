"""A Logs row as segments: its prefix (time, rank, level, source, node) and its text,
the search's matches marked. Pure: styles come from the caller (`LogView`).

Built directly, not through `rich.text.Text`: its `append` scans every text for control
codes again (the buffer made them inert already: `textsafe.log_text`) and `render`
splits and joins spans; in a 12,000 lines/s flood the two were a quarter of the screen
update's time (py-spy, bench 18.13).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

if TYPE_CHECKING:
    from ito_tui.state.logbuffer import ShownLine

__all__ = ["NODE_FROM", "SOURCE_FROM", "prefix_of", "row_segments", "search_spans"]

SOURCE_FROM = 60
"""Widget width from which a row also names the line's source (`nccl`, `torchft`)."""
NODE_FROM = 110
"""Widget width from which a row also names the line's node."""
LEVEL_MARKS = {"debug": "D", "info": "I", "warning": "W", "error": "E", "critical": "C"}
"""One letter per level beside the colour, so a level reads without colour too."""
RANK_WIDTH = 5
"""`r1023`: the ranks of 128 nodes of 8 GPUs (up to 9,999) keep the rows aligned."""


def prefix_of(line: ShownLine, width: int) -> str:
    """A row's prefix: time (UTC, the run's clock: `sim_ts` in a demo), rank, level letter;
    the source and node where they fit."""
    rank = "" if line.rank is None else f"r{line.rank}"
    if len(rank) > RANK_WIDTH:  # a wrong rank must not push the text out of its column
        rank = rank[: RANK_WIDTH - 1] + "…"
    level = LEVEL_MARKS.get(line.level, "?")
    prefix = f"{line.at:%H:%M:%S} {rank:>{RANK_WIDTH}} {level} "
    if width >= SOURCE_FROM:
        prefix += f"{line.source[:10]:<10} "
    if width >= NODE_FROM:
        prefix += f"{(line.node or '')[:16]:<16} "
    return prefix


BODY = {
    "debug": "logview--debug",
    "warning": "logview--warning",
    "error": "logview--error",
    "critical": "logview--error",
}
"""The style of a line's text by its level (info and unknown levels: the widget's own)."""
CUT_MARK = " ✂ cut"


def search_spans(text: str, needle: str, pattern: re.Pattern[str] | None) -> list[tuple[int, int]]:
    """Where the search matches `text` (start, end), in order, not overlapping: what
    `pattern` matches (a regex), else `needle` case-insensitively; none without either."""
    if pattern is not None:
        return [m.span() for m in pattern.finditer(text) if m.end() > m.start()]
    folded_needle = needle.casefold()
    if not folded_needle:
        return []
    folded, spans = text.casefold(), []
    at = folded.find(folded_needle)
    # casefold keeps lengths for the texts a log holds; a length change (ß -> ss) only
    # moves the highlight (clamped to the text), never the text.
    while at >= 0:
        spans.append((min(at, len(text)), min(at + len(folded_needle), len(text))))
        at = folded.find(folded_needle, at + len(folded_needle))
    return spans


def row_segments(
    line: ShownLine,
    width: int,
    spans: list[tuple[int, int]],
    styled: Callable[[str | None, bool], Style],
) -> tuple[list[Segment], int]:
    """The row's segments and its length in cells, unpadded. `styled(name, match)` is the
    style of component class `name` (None: the widget's own), marked as a match or not."""
    prefix = prefix_of(line, width)
    body = BODY.get(line.level)
    text = line.text
    segments = [Segment(prefix, styled("logview--prefix", False))]
    if spans:
        plain, hit = styled(body, False), styled(body, True)
        at = 0
        for begin, end in spans:
            if begin > at:
                segments.append(Segment(text[at:begin], plain))
            if end > begin:
                segments.append(Segment(text[begin:end], hit))
            at = max(at, end)
        if at < len(text):
            segments.append(Segment(text[at:], plain))
    elif text:
        segments.append(Segment(text, styled(body, False)))
    if line.cut:
        segments.append(Segment(CUT_MARK, styled("logview--prefix", False)))
    return segments, cell_len(prefix) + cell_len(text) + (len(CUT_MARK) if line.cut else 0)
