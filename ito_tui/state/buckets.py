"""The folded buckets of a telemetry series: rings of (x range, min, max, last, count, odd).

A bucket's `lo`/`hi` are the extremes of its *finite* samples (+inf/-inf when it has
none: the identities of min and max, so they never win a comparison), and `odd` is a
bitmask of the non-finite kinds it holds (`NAN_BIT`, `POS_INF_BIT`, `NEG_INF_BIT`), so a
NaN or an infinity folded into history is still marked on the chart and never poisons
the scale of the finite ones.
"""

from __future__ import annotations

import math
from array import array
from typing import TypeVar

__all__ = [
    "NAN_BIT",
    "NEG_INF_BIT",
    "POS_INF_BIT",
    "Bucket",
    "Ring",
    "finite_parts",
    "kind_bit",
    "odd_of",
    "union",
]

NAN_BIT = 1
POS_INF_BIT = 2
NEG_INF_BIT = 4


def kind_bit(y: float) -> int:
    """The `odd` bit of a sample: 0 for a finite one."""
    if y - y == 0.0:  # finite (inf - inf and NaN - NaN are NaN); the fast common case
        return 0
    return NAN_BIT if math.isnan(y) else POS_INF_BIT if y > 0 else NEG_INF_BIT


def union(bits: array[int]) -> int:
    """The bitwise OR of `bits` (0 at C speed when none is set, the common case)."""
    if not bits or not max(bits):
        return 0
    out = 0
    for b in set(bits):
        out |= b
    return out


def finite_parts(ys: array[float]) -> tuple[array[float], array[float]]:
    """`ys` as (lo, hi) arrays in which a non-finite value is +inf / -inf: never the min
    or the max, so a column's extremes are those of its finite samples."""
    inf = math.inf
    lo = array("d", [y if y - y == 0.0 else inf for y in ys])
    hi = array("d", [y if y - y == 0.0 else -inf for y in ys])
    return lo, hi


def odd_of(ys: array[float]) -> array[int]:
    """The `odd` bit of each of `ys`."""
    return array("B", [kind_bit(y) for y in ys])


_T = TypeVar("_T", int, float)

Bucket = tuple[float, float, float, float, float, float, int]
"""(x0, x1, lo, hi, last, n, odd)."""


class Ring:
    """A fixed-capacity ring of buckets stored column-wise in `array`s."""

    __slots__ = ("cap", "head", "hi", "last", "lo", "n", "odd", "size", "x0", "x1")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = 0
        self.size = 0
        zeros = bytes(8 * cap)  # cap zeros as doubles, without a list of cap floats
        self.x0 = array("d", zeros)
        self.x1 = array("d", zeros)
        self.lo = array("d", zeros)
        self.hi = array("d", zeros)
        self.last = array("d", zeros)
        self.n = array("d", zeros)
        self.odd = array("B", bytes(cap))

    def nbytes(self) -> int:
        return 6 * self.x0.itemsize * self.cap + self.odd.itemsize * self.cap

    def push(
        self, x0: float, x1: float, lo: float, hi: float, last: float, n: float, odd: int
    ) -> None:
        i = (self.head + self.size) % self.cap
        self.x0[i] = x0
        self.x1[i] = x1
        self.lo[i] = lo
        self.hi[i] = hi
        self.last[i] = last
        self.n[i] = n
        self.odd[i] = odd
        self.size += 1

    def pop_two(self) -> Bucket:
        """Remove the two oldest buckets and return them merged."""
        i, j = self.head, (self.head + 1) % self.cap
        self.head = (self.head + 2) % self.cap
        self.size -= 2
        return (
            self.x0[i],
            self.x1[j],
            min(self.lo[i], self.lo[j]),
            max(self.hi[i], self.hi[j]),
            self.last[j],
            self.n[i] + self.n[j],
            self.odd[i] | self.odd[j],
        )

    def linear(self, arr: array[_T]) -> array[_T]:
        """The ring's values of `arr`, oldest first."""
        end = self.head + self.size
        if end <= self.cap:
            return arr[self.head : end]
        return arr[self.head :] + arr[: end - self.cap]

    def odd_linear(self) -> array[int] | None:
        """`linear(odd)`, or None when no bucket holds a non-finite sample."""
        odd = self.linear(self.odd)
        return odd if union(odd) else None

    def compact(self) -> None:
        """Merge adjacent pairs in place: half as many buckets, each twice as wide."""
        x0, x1, lo, hi = (self.linear(a) for a in (self.x0, self.x1, self.lo, self.hi))
        last, n = self.linear(self.last), self.linear(self.n)
        odd = self.linear(self.odd)
        half = self.size // 2
        for k in range(half):
            a, b = 2 * k, 2 * k + 1
            self.x0[k] = x0[a]
            self.x1[k] = x1[b]
            self.lo[k] = min(lo[a], lo[b])
            self.hi[k] = max(hi[a], hi[b])
            self.last[k] = last[b]
            self.n[k] = n[a] + n[b]
            self.odd[k] = odd[a] | odd[b]
        self.head, self.size = 0, half
        if len(x0) % 2:  # an odd bucket out stays, newest
            self.push(x0[-1], x1[-1], lo[-1], hi[-1], last[-1], n[-1], odd[-1])
