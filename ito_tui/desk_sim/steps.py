"""Where a run's telemetry steps go backwards, so a step range maps to a few idx spans.

A run's samples (numbered by `idx`, in seq order) have steps that never decrease except
where a stage starts (steps count from 0 per stage) or the run is rewound (a rollback or a
recovery from a checkpoint repeats the steps since it). Each stretch between such points
is a *segment* (`telemetry_segments`: the idx each one starts at). Within a segment the
samples of a step range `[from_step, to_step]` are one contiguous idx span, found by two
binary searches on the sample bodies' `step`; across segments the spans stay in idx order,
so a rewound stretch's two samples per step both count, ordered by seq. Work per query:
O(segments x log n) point reads, whatever the range's width.
"""

from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS telemetry_segments(
  run_id TEXT NOT NULL, start_idx INTEGER NOT NULL,
  PRIMARY KEY(run_id, start_idx)) WITHOUT ROWID;
"""

_NOTE = """
INSERT OR IGNORE INTO telemetry_segments(run_id, start_idx)
SELECT ?, idx FROM (
  SELECT idx, json_extract(body, '$.step') AS s,
         LAG(json_extract(body, '$.step')) OVER (ORDER BY idx) AS p
  FROM telemetry WHERE run_id=? AND idx>=?)
WHERE (p IS NULL AND ?) OR s < p
"""
# The first row read has no predecessor (p IS NULL): it starts a segment only when the run
# had none yet (its first sample); otherwise it is the last sample already noted.


def note_segments(conn: sqlite3.Connection, run_id: str, first_idx: int) -> None:
    """Record the segments that samples from `first_idx` on (just inserted) start."""
    fresh = conn.execute(
        "SELECT 1 FROM telemetry_segments WHERE run_id=? LIMIT 1", (run_id,)
    ).fetchone()
    conn.execute(_NOTE, (run_id, run_id, max(first_idx - 1, 0), fresh is None))


def backfill_segments(conn: sqlite3.Connection) -> None:
    """Databases written before segments existed: note every run's once (one scan each)."""
    runs = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT run_id FROM telemetry_blocks WHERE run_id NOT IN "
            "(SELECT run_id FROM telemetry_segments)"
        )
    ]
    for run_id in runs:
        note_segments(conn, run_id, 0)


def step_spans(
    conn: sqlite3.Connection,
    run_id: str,
    from_step: int,
    to_step: int,
    i0: int,
    total: int,
) -> list[tuple[int, int]]:
    """The half-open idx spans within `[i0, total)` whose samples have
    `from_step <= step <= to_step`, in idx order (module docstring)."""
    starts = [
        int(r[0])
        for r in conn.execute(
            "SELECT start_idx FROM telemetry_segments WHERE run_id=? AND start_idx<?"
            " ORDER BY start_idx",
            (run_id, total),
        )
    ]
    if not starts or starts[0] > 0:
        starts.insert(0, 0)

    def step(idx: int) -> int | None:
        row = conn.execute(
            "SELECT json_extract(body, '$.step') FROM telemetry WHERE run_id=? AND idx=?",
            (run_id, idx),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def first(lo: int, hi: int, below: int) -> int:
        """The first idx in [lo, hi) whose step is not below `below` (hi if none)."""
        while lo < hi:
            mid = (lo + hi) // 2
            value = step(mid)
            if value is not None and value >= below:
                hi = mid
            else:
                lo = mid + 1
        return lo

    spans: list[tuple[int, int]] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else total
        start = max(start, i0)
        if start >= end:
            continue
        low, high = step(start), step(end - 1)
        if low is None or high is None or high < from_step or low > to_step:
            continue
        a = first(start, end, from_step)
        b = first(a, end, to_step + 1)
        if a < b:
            spans.append((a, b))
    return spans
