"""What the chart inspector holds of a run, and nothing more: the whole-run page, one
zoomed page, a bounded live tail; and the CSV of the points it shows (`write_csv`).

No Textual here: the inspector screen fetches the pages (workers) and hands them in.
Each page is `2 × width` samples at most (the backend downsamples: `max_points`), the
tail `TAIL`, so what is held does not grow with the run nor with zooming and panning.
"""

from __future__ import annotations

import csv
import re
from collections import deque
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from ito_tui.contract import TelemetrySample
from ito_tui.state.inspect import Point, merge_points, points_of

__all__ = ["TAIL", "InspectorPages", "write_csv"]

TAIL = 2048
"""Live samples kept beyond the whole-run page; once full, the whole run is fetched again."""


class InspectorPages:
    """The samples of metric `key` that the inspector holds, and their points."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.whole: list[TelemetrySample] = []
        self.whole_width = 0
        """The `max_points` the whole-run page was fetched with (0: not yet)."""
        self._whole_points: list[Point] = []
        self.zoomed: tuple[tuple[int, int], list[TelemetrySample], list[Point]] | None = None
        """(steps, samples, points) of the zoomed page."""
        self.tail: deque[TelemetrySample] = deque(maxlen=TAIL)
        self._points: list[Point] | None = None

    def points(self) -> list[Point]:
        """Every point held, each seq once, by seq (merged once per change)."""
        if self._points is None:
            zoomed = self.zoomed[2] if self.zoomed is not None else []
            tail = points_of(self.tail, self.key)
            self._points = merge_points(self._whole_points, zoomed, tail)
        return self._points

    def samples(self) -> list[TelemetrySample]:
        """Every sample held, each seq once, by seq."""
        by_seq = {s.seq: s for s in self.whole}
        if self.zoomed is not None:
            by_seq.update((s.seq, s) for s in self.zoomed[1])
        by_seq.update((s.seq, s) for s in self.tail)
        return [by_seq[seq] for seq in sorted(by_seq)]

    def set_whole(self, items: Iterable[TelemetrySample], max_points: int) -> None:
        """The whole-run page; the tail keeps only what came after it."""
        self.whole = sorted(items, key=lambda s: s.seq)
        self.whole_width = max_points
        self._whole_points = points_of(self.whole, self.key)
        last = self.whole[-1].seq if self.whole else 0
        kept = [s for s in self.tail if s.seq > last]
        self.tail.clear()
        self.tail.extend(kept)
        self._points = None

    def set_zoomed(self, steps: tuple[int, int], items: Iterable[TelemetrySample]) -> None:
        """The zoomed page of `steps` (replacing the one held)."""
        page = sorted(items, key=lambda s: s.seq)
        self.zoomed = (steps, page, points_of(page, self.key))
        self._points = None

    def covers(self, wanted: tuple[int, int]) -> bool:
        """Whether the zoomed page held covers `wanted` at least half as finely as a new
        page of it would (the same `max_points` over at most twice the steps)."""
        if self.zoomed is None:
            return False
        lo, hi = self.zoomed[0]
        return lo <= wanted[0] and wanted[1] <= hi and (wanted[1] - wanted[0]) * 2 > hi - lo

    def add_live(self, sample: TelemetrySample) -> bool:
        """A live sample joins the tail (not one the whole-run page has); True when the
        tail is full and the whole run should be fetched again."""
        if self.whole and sample.seq <= self.whole[-1].seq:
            return False
        full = len(self.tail) == TAIL
        self.tail.append(sample)
        self._points = None
        return full

    def clear(self) -> None:
        self.whole, self._whole_points, self.zoomed = [], [], None
        self.tail.clear()
        self._points = None


def write_csv(
    folder: Path, run_id: str, key: str, samples: Sequence[TelemetrySample], metrics: Sequence[str]
) -> Path:
    """`samples` as CSV (`state.export`: the fixed fields and `metrics`) in a new file of
    `folder` named after the run, the key and the time; returns its path."""
    from ito_tui.state.export import columns, csv_rows

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    safe_key = re.sub(r"[^A-Za-z0-9._-]+", "_", key)[:64]
    safe_run = re.sub(r"[^A-Za-z0-9._-]+", "_", run_id)[:64]
    path = folder / f"{safe_run}-{safe_key}-{stamp}.csv"
    with path.open("x", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(columns(metrics))
        writer.writerows(csv_rows(samples, metrics))
    return path
