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

    A window shorter than the run lays its columns on a fixed grid of step
    `window / width` (multiples of the step, not offsets from the newest sample),
    so a new sample changes only the last column (the one it falls in) and the
    first (which the window's start slides through); the others keep their
    samples until the grid scrolls by a whole step. The window touches
    `width + 1` grid cells, the first and the last partly: the first column
    holds the two oldest, so it is one to two steps wide and never a sliver
    with no sample in it. The whole run, or a window longer than the run, is
    stretched over the width instead (its span grows with every sample).
    """
    if window is not None and 0 < window < x_end - first_x and width > 1:
        step = window / width
        cell = x_end / step if step > 0 else math.inf
        if abs(cell) < 2.0**52:  # a grid finer than a float can count stretches instead
            x_start = x_end - window
            first_cell = math.floor(cell) - (width - 1)
            # Clamped to the newest x too: `floor(x_end / step) * step` can round to just
            # above `x_end`, which left the newest sample out of the last column.
            inner = [min(x_end, max(x_start, (first_cell + c) * step)) for c in range(1, width)]
            return [x_start, *inner, math.inf]
    x_start = first_x if window is None else max(first_x, x_end - window)
    span = x_end - x_start
    return [x_start + span * c / width for c in range(width)] + [math.inf]


def column_of(x: float, edges: list[float]) -> int:
    """The column of `x` (clamped to the view)."""
    return max(0, min(len(edges) - 2, bisect_right(edges, x) - 1))
