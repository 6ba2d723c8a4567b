"""The inspector's `Viewport` (what the operator chose to see) and its pure transitions:
zoom around the cursor, pan, cursor moves, reset, the x axis, log-Y and smoothing.

Each transition takes the `InspectorView` last drawn (its x range, width and the data's
extent) and returns a new `Viewport`; `inspector_view` draws that. Zooming in by `f` and
out by `1/f` around the same cursor returns the range it started from, because the
cursor's x keeps its place on the screen (the cursor stays in its column).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .inspect_points import AXES, SMOOTHING, XAxis

if TYPE_CHECKING:
    from .inspect import InspectorView

__all__ = [
    "MIN_SPAN",
    "Viewport",
    "cursor_column",
    "cycle_axis",
    "cycle_smoothing",
    "move_cursor",
    "pan",
    "reset",
    "toggle_log",
    "wanted_steps",
    "zoom",
]

MIN_SPAN: dict[XAxis, float] = {"step": 4.0, "tokens": 4.0, "time": 2.0}
"""The narrowest x range a zoom reaches (steps, tokens, seconds)."""


@dataclass(frozen=True, slots=True)
class Viewport:
    """What the operator chose: the axis, the visible range on it, the cursor, log-Y and
    the smoothing (an index into `SMOOTHING`)."""

    axis: XAxis = "step"
    lo: float | None = None
    """Visible x range on `axis`; None = the whole run (it grows with a live run)."""
    hi: float | None = None
    cursor: int = -1
    """The cursor's column; -1 = the last column (it follows a live run)."""
    log_y: bool = False
    smoothing: int = 0

    @property
    def zoomed(self) -> bool:
        return self.lo is not None and self.hi is not None

    @property
    def weight(self) -> float:
        """The EMA weight of `smoothing`."""
        return SMOOTHING[self.smoothing % len(SMOOTHING)]


def cursor_column(vp: Viewport, width: int) -> int:
    """The cursor's column in a plot `width` columns wide."""
    last = max(1, width) - 1
    return last if vp.cursor < 0 else min(vp.cursor, last)


def _clamped(lo: float, hi: float, x_min: float, x_max: float) -> tuple[float, float]:
    """[lo, hi] shifted (not narrowed) to lie inside [x_min, x_max] where it fits."""
    span = hi - lo
    if lo < x_min:
        lo, hi = x_min, x_min + span
    if hi > x_max:
        lo, hi = max(x_min, x_max - span), x_max
    return lo, hi


def zoom(vp: Viewport, view: InspectorView, factor: float) -> Viewport:
    """Zoom in by `factor` (> 1; < 1 zooms out) around the cursor's x, which keeps its
    column (the newest x when the cursor follows the run). Zooming out to the whole run
    or past it is the whole run (`lo = hi = None`); no zoom goes below `MIN_SPAN`, nor
    outside the data."""
    lo, hi, width = view.x_lo, view.x_hi, max(1, len(view.columns))
    if not (math.isfinite(factor) and factor > 0) or hi <= lo:
        return vp
    span = (hi - lo) / factor
    if span >= view.x_max - view.x_min:
        return replace(vp, lo=None, hi=None)
    span = max(span, min(MIN_SPAN[vp.axis], view.x_max - view.x_min))
    # A cursor following the run (-1) zooms around the newest x, so the newest data stays.
    frac = 1.0 if vp.cursor < 0 else (cursor_column(vp, width) + 0.5) / width
    cx = lo + frac * (hi - lo)
    new_lo = cx - frac * span
    new_lo, new_hi = _clamped(new_lo, new_lo + span, view.x_min, view.x_max)
    return replace(vp, lo=new_lo, hi=new_hi)


def pan(vp: Viewport, view: InspectorView, fraction: float) -> Viewport:
    """Move the range by `fraction` of its width (negative: back), kept inside the data;
    the whole run does not pan."""
    if not vp.zoomed or not math.isfinite(fraction):
        return vp
    shift = fraction * (view.x_hi - view.x_lo)
    lo, hi = _clamped(view.x_lo + shift, view.x_hi + shift, view.x_min, view.x_max)
    return replace(vp, lo=lo, hi=hi)


def move_cursor(vp: Viewport, view: InspectorView, by: int) -> Viewport:
    """The cursor `by` columns on (negative: back), kept within the plot; reaching the
    last column it follows the run again (-1)."""
    width = max(1, len(view.columns))
    column = max(0, min(width - 1, cursor_column(vp, width) + by))
    return replace(vp, cursor=-1 if column == width - 1 else column)


def reset(vp: Viewport) -> Viewport:
    """The whole run, the cursor on the newest column; axis, log-Y and smoothing kept."""
    return replace(vp, lo=None, hi=None, cursor=-1)


def cycle_axis(vp: Viewport) -> Viewport:
    """The next x axis (step → tokens → time → step), over the whole run."""
    axis = AXES[(AXES.index(vp.axis) + 1) % len(AXES)]
    return replace(vp, axis=axis, lo=None, hi=None, cursor=-1)


def toggle_log(vp: Viewport) -> Viewport:
    return replace(vp, log_y=not vp.log_y)


def cycle_smoothing(vp: Viewport) -> Viewport:
    """The next stop of `SMOOTHING` (0 → 0.6 → 0.9 → 0.99 → 0)."""
    return replace(vp, smoothing=(vp.smoothing + 1) % len(SMOOTHING))


def wanted_steps(vp: Viewport, view: InspectorView) -> tuple[int, int] | None:
    """The steps (inclusive) whose finer data a zoomed view should fetch: those of the
    visible range and one point beyond each side, inside the data; None when the view
    is the whole run (its page will do) or holds no point."""
    if not vp.zoomed:
        return None
    return view.step_range
