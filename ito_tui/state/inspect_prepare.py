"""What the inspector computes from its points before the visible range: ordered by seq,
x on the axis, the reference aligned, the EMA, the one stage a step axis shows. Kept for
the last inputs, so zoom and pan only bucket again. Pure, no Textual."""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import attrgetter
from typing import NamedTuple

from ito_tui.format import to_float

from .inspect_plot import aligned, ema
from .inspect_points import Point, XAxis

__all__ = ["Prepared", "fingerprint", "prepare"]


def fingerprint(points: Sequence[Point]) -> tuple[int, int]:
    """Which points these are, by value: a list built again from the same pages
    (`merge_points` on every redraw) is the same. (A NaN hashes by identity: the same
    sample's is the same object; another NaN only costs a redraw.)"""
    return len(points), hash(tuple(points))


def _seq(p: Point) -> int:
    return p.seq


class Prepared(NamedTuple):
    """What a view computes from its inputs before the range: kept while they stay."""

    ordered: list[Point]
    xs: list[float]
    pairs: list[tuple[float, Point]]
    ref_pairs: list[tuple[float, Point]]
    smooth: list[float] | None
    ref_smooth: list[float] | None
    stage: str | None
    """The stage the step axis shows, when the points span more than one."""
    window: tuple[float, float]
    """That stage's time: from its first sample to the next stage's (marks in it)."""


_prepared: list[tuple[tuple[object, ...], tuple[object, ...], Prepared]] = []
"""The last `Prepared` and its inputs (held, so their ids stay theirs): zoom and pan
bucket again without sorting, aligning or smoothing again."""


def prepare(
    points: Sequence[Point],
    ref: Sequence[Point] | None,
    axis: XAxis,
    by: XAxis,
    weight: float,
    stage: str | None,
) -> Prepared:
    ref_print = None if ref is None else fingerprint(ref)
    inputs = (fingerprint(points), ref_print, axis, by, weight, stage)
    if _prepared and _prepared[0][1] == inputs:
        return _prepared[0][2]
    ordered = sorted(points, key=_seq)
    shown: str | None = None
    window = (-math.inf, math.inf)
    if axis == "step" and ordered:
        newest = ordered[-1].stage
        if stage is not None or any(p.stage != newest for p in ordered):
            shown = _main_stage(ordered) if stage is None else stage
            ordered, window = _one_stage(ordered, shown)
            if ref:
                ref = _ref_stage(ref, shown)
    get = _X[axis]
    xs = [to_float(get(p)) for p in ordered]  # a step past float range: the edge, no crash
    ref_pairs = aligned(ref, ordered, axis, by) if ref else []
    smooth = weight > 0
    prepared = Prepared(
        ordered,
        xs,
        list(zip(xs, ordered, strict=True)),
        ref_pairs,
        ema([p.value for p in ordered], weight) if smooth else None,
        ema([p.value for _, p in ref_pairs], weight) if smooth and ref_pairs else None,
        shown,
        window,
    )
    _prepared[:] = [((points, ref), inputs, prepared)]
    return prepared


def _main_stage(ordered: Sequence[Point]) -> str:
    """The stage most of the points are of (pretraining, in a whole run's page; the newer
    of two as many): the one whose steps a step axis shows unless told."""
    seen: dict[str, tuple[int, int]] = {}  # stage: (points, index of its newest)
    for i, p in enumerate(ordered):
        seen[p.stage] = (seen.get(p.stage, (0, 0))[0] + 1, i)
    return max(seen, key=seen.__getitem__)


def _one_stage(ordered: list[Point], stage: str) -> tuple[list[Point], tuple[float, float]]:
    """The points of `stage` (by seq) and its time: its first sample's to the first later
    sample of another stage's (open while it is the newest)."""
    mine = [p for p in ordered if p.stage == stage]
    if not mine:
        return [], (math.inf, math.inf)
    last_seq = mine[-1].seq
    later = [p.ts for p in ordered if p.seq > last_seq and p.stage != stage]
    return mine, (min(p.ts for p in mine), min(later) if later else math.inf)


def _ref_stage(ref: Sequence[Point], stage: str) -> list[Point]:
    """The reference's points of `stage` (all of them when it says no stage)."""
    if all(not p.stage for p in ref):
        return list(ref)
    return [p for p in ref if p.stage == stage]


_X = {"step": attrgetter("step"), "tokens": attrgetter("tokens"), "time": attrgetter("ts")}
