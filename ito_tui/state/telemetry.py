"""Telemetry history at bounded memory whatever the run length, and sparkline views of it.

`TelemetrySeries` keeps the newest `RAW` samples as they came; older samples
are folded into buckets (min, max, last, count, non-finite kinds; `buckets.Ring`) kept
in a stack of levels. Each
level is a fixed-size ring; level *k*'s buckets are twice as wide as level
*k−1*'s (width counted in samples), and when a level is full its two oldest
buckets merge into one bucket of the next level. The last level, when full,
merges its own buckets pairwise in place. So memory never exceeds
`RAW + LEVELS × BUCKETS` entries, every append is O(1) amortised, and because
merging keeps min and max a dip or a spike is never averaged away.

NaN and ±Infinity are data (a diverged loss): they count as samples and can be the
`last` value, but min and max are over the finite samples only, and each column says
which non-finite kinds fell in it (`Column.odd`), so a chart marks them without
letting them flatten or poison its scale.

Storage is `array('d')` (8 bytes a number, no Python objects per sample) and a
view slices and bisects those arrays, so drawing a 90-day run costs about the
same as a 5-minute one.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .buckets import (
    NAN_BIT,
    NEG_INF_BIT,
    POS_INF_BIT,
    Bucket,
    Ring,
    finite_parts,
    kind_bit,
    odd_of,
    union,
)
from .grid import Grid, column_edges, column_of

if TYPE_CHECKING:
    _Segment = tuple[
        array[float], array[float], array[float], array[float], array[float], array[int] | None
    ]
    """(x0, x1, lo, hi, last, odd) of one stored segment (`TelemetrySeries._segments`)."""

__all__ = ["NAN_BIT", "NEG_INF_BIT", "POS_INF_BIT", "Column", "SeriesView", "TelemetrySeries"]

RAW = 4096
"""Newest samples kept raw."""
BUCKET = 8
"""Samples per bucket of the first level."""
BUCKETS = 256
"""Buckets per level (even)."""
LEVELS = 10
"""Number of levels; the last one compacts itself instead of spilling."""
MAX_MARKERS = 256


class Column(NamedTuple):
    """What one sparkline column draws: the finite extremes and the last value in it."""

    min: float | None
    """Smallest finite value in the column; None when it holds only non-finite ones."""
    max: float | None
    last: float
    """The newest value in the column (NaN or ±inf too)."""
    odd: int = 0
    """Which non-finite kinds the column holds: `NAN_BIT | POS_INF_BIT | NEG_INF_BIT`."""


@dataclass(frozen=True, slots=True)
class SeriesView:
    """A sparkline's worth of a series: one `Column` (or None: no data) per column."""

    columns: tuple[Column | None, ...]
    x_start: float
    x_end: float
    min: float | None
    """Smallest finite value in the window (kept: a column holding it shows it)."""
    max: float | None
    last: float | None
    """The series' newest value (NaN or ±inf too)."""
    markers: tuple[tuple[int, str], ...] = ()
    """(column, label) of every marker inside the window."""

    @property
    def width(self) -> int:
        return len(self.columns)


class TelemetrySeries:
    """One metric's history: append O(1) amortised, memory bounded, min/max-preserving views.

    `x` must not decrease (seq or seconds); a smaller `x` is clamped to the
    last one and marked, so the stored series stays ordered. `y=None` is a gap
    (nothing stored).
    """

    __slots__ = (
        "_bucket",
        "_buckets",
        "_cache",
        "_folded_x",
        "_grid",
        "_levels",
        "_marked",
        "_markers",
        "_max_levels",
        "_next",
        "_odd_raw",
        "_open",
        "_raw",
        "_size",
        "_xs",
        "_ys",
        "count",
        "first_x",
        "last",
        "last_x",
        "max",
        "min",
        "name",
    )

    def __init__(
        self,
        name: str = "",
        *,
        raw: int = RAW,
        bucket: int = BUCKET,
        buckets: int = BUCKETS,
        levels: int = LEVELS,
    ) -> None:
        if raw < 1 or bucket < 1 or buckets < 2 or buckets % 2 or levels < 1:
            raise ValueError("raw, bucket >= 1; buckets even and >= 2; levels >= 1")
        self.name = name
        self._raw = raw
        self._bucket = bucket
        self._buckets = buckets
        self._max_levels = levels
        zeros = bytes(8 * raw)  # array("d", bytes) is 20x faster than from a list of floats
        self._xs = array("d", zeros)
        self._ys = array("d", zeros)
        self._next = 0
        """Raw slot the next sample goes to (the oldest one once the ring is full)."""
        self._size = 0
        # The open first-level bucket that raw samples fold into.
        self._open: list[float] | None = None
        self._odd_raw = 0
        """Non-finite samples in the raw ring (0: views take the fast path)."""
        self._levels: list[Ring] = []
        self._markers: deque[tuple[float, str]] = deque(maxlen=MAX_MARKERS)
        self._marked = 0
        # The last view and what it was computed from: redraws with no new sample are free.
        self._cache: tuple[tuple[int, float | None, int, int], SeriesView] | None = None
        self._grid: Grid | None = None
        """The last view's columns, so that the next one recomputes only what changed."""
        self._folded_x = -math.inf
        """The x of the newest sample folded into buckets (folding changes nothing newer)."""
        self.count = 0
        """Samples appended so far, non-finite ones included (gaps not counted)."""
        self.min: float | None = None
        """Smallest finite value ever appended."""
        self.max: float | None = None
        self.last: float | None = None
        """The newest value."""
        self.last_x: float | None = None
        self.first_x: float | None = None

    # ------------------------------------------------------------ writing

    def append(self, x: float, y: float | None) -> None:
        """Add one sample (`y=None`: a gap, nothing stored; NaN and ±inf are samples)."""
        if y is None:
            return
        last_x = self.last_x
        if last_x is None:
            self.first_x = x
        elif x < last_x:
            self.add_marker(last_x, "x went back")
            x = last_x
        if y - y == 0.0:  # finite
            lo, hi = self.min, self.max
            if lo is None or hi is None:
                self.min = self.max = y
            elif y < lo:
                self.min = y
            elif y > hi:
                self.max = y
        else:
            self._odd_raw += 1
        self.count += 1
        self.last = y
        self.last_x = x
        i = self._next
        if self._size == self._raw:  # full: slot i holds the oldest sample
            self._folded_x = self._xs[i]
            old = self._ys[i]
            if old - old != 0.0:
                self._odd_raw -= 1
            self._fold(self._xs[i], old)
        else:
            self._size += 1
        self._xs[i] = x
        self._ys[i] = y
        i += 1
        self._next = 0 if i == self._raw else i

    def _fold(self, x: float, y: float) -> None:
        b = self._open
        if b is None:
            b = self._open = [x, x, math.inf, -math.inf, y, 0.0, 0.0]
        b[1] = x
        bit = kind_bit(y)
        if bit:
            b[6] = float(int(b[6]) | bit)
        else:
            if y < b[2]:
                b[2] = y
            if y > b[3]:
                b[3] = y
        b[4] = y
        b[5] += 1.0
        if b[5] >= self._bucket:
            self._open = None
            self._push(0, (b[0], b[1], b[2], b[3], b[4], b[5], int(b[6])))

    def _push(self, k: int, bucket: Bucket) -> None:
        if k == len(self._levels):
            self._levels.append(Ring(self._buckets))
        ring = self._levels[k]
        if ring.size == ring.cap:
            if k == self._max_levels - 1:
                ring.compact()
            else:
                self._push(k + 1, ring.pop_two())
        ring.push(*bucket)

    def add_marker(self, x: float, label: str) -> None:
        """Mark `x` (a rewind, a fault): drawn by views whose window holds it."""
        self._markers.append((x, label))
        self._marked += 1

    @property
    def markers(self) -> tuple[tuple[float, str], ...]:
        """(x, label) of the newest `MAX_MARKERS` markers, oldest first."""
        return tuple(self._markers)

    # ------------------------------------------------------------ reading

    def max_nbytes(self) -> int:
        """The most `nbytes()` can ever be, whatever the number of samples."""
        rings = (6 * 8 + 1) * self._buckets * self._max_levels
        return 8 * 2 * self._raw + rings + 48 * MAX_MARKERS

    def nbytes(self) -> int:
        """Bytes held by the sample storage (bounded by `max_nbytes()`)."""
        raw = self._xs.itemsize * (len(self._xs) + len(self._ys))
        rings = sum(r.nbytes() for r in self._levels)
        return raw + rings + 48 * len(self._markers)

    def _segments(self, x_from: float, x_to: float) -> Iterator[_Segment]:
        """(x0, x1, lo, hi, last, odd) arrays, oldest segment first, each ordered by x, of
        the stored data that can fall in [x_from, x_to): rings and the open bucket that
        reach into it whole, raw samples (points) only those inside it. `lo`/`hi` are
        over finite values only; `odd` is None where no sample is non-finite."""
        for ring in reversed(self._levels):
            if not ring.size:
                continue
            oldest, newest = ring.head, (ring.head + ring.size - 1) % ring.cap
            if ring.x1[newest] >= x_from and ring.x0[oldest] < x_to:
                x0, x1, lo, hi, last = (
                    ring.linear(a) for a in (ring.x0, ring.x1, ring.lo, ring.hi, ring.last)
                )
                yield x0, x1, lo, hi, last, ring.odd_linear()
        b = self._open
        if b is not None and b[1] >= x_from and b[0] < x_to:
            x0, x1, lo, hi, last = (array("d", [v]) for v in b[:5])
            yield x0, x1, lo, hi, last, array("B", [int(b[6])]) if b[6] else None
        if not self._size:
            return
        xs, ys = self._xs, self._ys
        # The raw ring in order: one part until it is full, then the oldest part first.
        parts = (
            ((0, self._size),)
            if self._size < self._raw
            else ((self._next, self._raw), (0, self._next))
        )
        for start, stop in parts:
            i = bisect_left(xs, x_from, start, stop)
            j = stop if x_to == math.inf else bisect_left(xs, x_to, i, stop)
            if i < j:
                part_x, part_y = xs[i:j], ys[i:j]
                if self._odd_raw:
                    yield (part_x, part_x, *finite_parts(part_y), part_y, odd_of(part_y))
                else:
                    yield part_x, part_x, part_y, part_y, part_y, None

    def _fill(self, grid: Grid, first: int, last: int) -> None:
        """Recompute columns `first`..`last` of `grid` from the stored data."""
        if first > last:
            return
        edges, width = grid.edges, grid.width
        lo_col, hi_col, last_col, odd_col = grid.lo, grid.hi, grid.last, grid.odd
        for c in range(first, last + 1):
            lo_col[c], hi_col[c], last_col[c], odd_col[c] = math.inf, -math.inf, None, 0
        for x0, x1, lo, hi, newest, odd in self._segments(edges[first], edges[last + 1]):
            # Only the columns this segment can touch (one extra each side for rounding).
            c_first = max(first, column_of(x0[0], edges) - 1)
            c_last = min(last, width - 1, column_of(x1[-1], edges) + 1)
            for c in range(c_first, c_last + 1):
                a = bisect_left(x1, edges[c])
                b = bisect_left(x0, edges[c + 1])
                if a >= b:
                    continue
                lo_c, hi_c = min(lo[a:b]), max(hi[a:b])
                if lo_c < lo_col[c]:
                    lo_col[c] = lo_c
                if hi_c > hi_col[c]:
                    hi_col[c] = hi_c
                last_col[c] = newest[b - 1]
                if odd is not None:
                    odd_col[c] |= union(odd[a:b])
        columns = grid.columns
        for c in range(first, last + 1):
            lc = last_col[c]
            if lc is None:
                columns[c] = None
            elif lo_col[c] <= hi_col[c]:
                columns[c] = Column(lo_col[c], hi_col[c], lc, odd_col[c])
            else:  # only non-finite samples: nothing to scale, only marks
                columns[c] = Column(None, None, lc, odd_col[c])

    def view(self, width: int, window: float | None = None) -> SeriesView:
        """What a sparkline `width` columns wide draws for the last `window` x-units.

        `window=None` is the whole run. Every column holds the min and max of
        all samples that fall in it, so the window's extremes are always drawn.
        """
        width = max(1, int(width))
        key = (width, window, self.count, self._marked)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        view = self._view(width, window)
        self._cache = (key, view)
        return view

    def _view(self, width: int, window: float | None) -> SeriesView:
        if self.count == 0 or self.last_x is None or self.first_x is None:
            return SeriesView((None,) * width, 0.0, 0.0, None, None, None)
        x_end = self.last_x
        edges = column_edges(self.first_x, x_end, width, window)
        x_start = edges[0]
        grid = self._grid
        if grid is not None and grid.same_grid(width, window, edges):
            # Only these columns can differ from the last view: the first (the window's
            # start slid through it), those new samples fell in (at or after the last
            # view's newest x), and those folding reached (at or before `_folded_x`).
            grid.edges = edges
            self._fill(grid, 0, 0)
            tail = column_of(grid.last_x, edges)
            if self._folded_x != grid.folded_x and self._folded_x >= x_start:
                folded = min(column_of(self._folded_x, edges), tail - 1)
                if folded >= 1:
                    self._fill(grid, 1, folded)
            self._fill(grid, max(1, tail), width - 1)
        else:
            grid = Grid(width, window, edges)
            self._fill(grid, 0, width - 1)
        grid.last_x, grid.folded_x = x_end, self._folded_x
        self._grid = grid
        # A column with no finite sample holds +inf/-inf here, which never win.
        lo, hi = min(grid.lo), max(grid.hi)
        marks = tuple(
            (column_of(x, edges), label) for x, label in self._markers if x_start <= x <= x_end
        )
        return SeriesView(
            tuple(grid.columns),
            x_start,
            x_end,
            lo if lo <= hi else None,
            hi if lo <= hi else None,
            self.last,
            marks,
        )
