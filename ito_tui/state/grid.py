"""The columns of a telemetry view: their x edges, and what the last view drew in each."""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .telemetry import Column

__all__ = ["Grid", "column_edges", "column_of"]


class Grid:
    """A view's column edges and per-column extremes, kept for the next view."""

    __slots__ = (
        "columns",
        "edges",
        "folded_x",
        "hi",
        "last",
        "last_x",
        "lo",
        "odd",
        "width",
        "window",
    )

    def __init__(self, width: int, window: float | None, edges: list[float]) -> None:
        self.width = width
        self.window = window
        self.edges = edges
        self.lo = [math.inf] * width
        self.hi = [-math.inf] * width
        self.last: list[float | None] = [None] * width
        self.odd = [0] * width
        self.columns: list[Column | None] = [None] * width
        self.last_x = -math.inf
        self.folded_x = -math.inf

    def same_grid(self, width: int, window: float | None, edges: list[float]) -> bool:
        """Whether `edges` are this grid's but for the first (the window's start)."""
        return width == self.width and window == self.window and edges[1:] == self.edges[1:]


def column_edges(first_x: float, x_end: float, width: int, window: float | None) -> list[float]:
    """Column edges: column c covers [edges[c], edges[c+1]); edges[width] is +inf.

    Columns lie on a fixed grid of one step (multiples of the step, not offsets from the
    newest sample), so a new sample changes only the last column (the one it falls in)
    and the first; the others keep their samples until the grid scrolls by a whole step.
    The first column runs from the view's start to the grid: it holds the oldest
    samples, is one to two steps wide and never a sliver with nothing in it.

    A window shorter than the run has the step `window / width`. The whole run, or a
    window longer than the run, is spread over the width: its step is the span over
    `width - 1` rounded down to a power of 2^(1/width), so the grid stays put while the
    run grows by about two thirds of a column (then its columns are laid again), and the
    first column is under 1.7 steps wide. A grid that moved with every sample would have
    every view recompute every column: two to three times the time of one that stays.
    """
    if window is not None and 0 < window < x_end - first_x:
        x_start, step = x_end - window, window / width
    else:
        x_start = first_x if window is None else max(first_x, x_end - window)
        span = x_end - x_start
        step = 0.0
        if 0 < span < math.inf and width > 1:  # two finite ends can be an infinite span
            step = 2.0 ** (math.floor(width * math.log2(span / (width - 1))) / width)
    if width > 1 and step > 0:
        cell = x_end / step
        if abs(cell) < 2.0**52:  # a grid finer than a float can count is spread instead
            first_cell = math.floor(cell) - (width - 1)
            # Clamped to the newest x too: `floor(x_end / step) * step` can round to just
            # above `x_end`, which left the newest sample out of the last column.
            inner = [min(x_end, max(x_start, (first_cell + c) * step)) for c in range(1, width)]
            return [x_start, *inner, math.inf]
    span = x_end - x_start
    if span == math.inf:  # two finite ends too far apart to subtract: weigh them instead
        return [x_start * (1 - c / width) + x_end * (c / width) for c in range(width)] + [math.inf]
    return [x_start + span * c / width for c in range(width)] + [math.inf]


def column_of(x: float, edges: list[float]) -> int:
    """The column of `x` (clamped to the view)."""
    return max(0, min(len(edges) - 2, bisect_right(edges, x) - 1))
