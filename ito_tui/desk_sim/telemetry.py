"""Telemetry pages with server-side, min/max-preserving downsampling to `max_points`.

Samples are numbered 0..n-1 per run (`idx`) and folded on insert into blocks of
64 holding each block's min- and max-loss sample. A downsampled page splits the
requested range into `max_points // 2` buckets and keeps, per bucket, the
sample with the lowest and the one with the highest loss, so spikes and dips
survive. When buckets span at least one block the blocks answer (work bounded
by n / 64); otherwise the raw rows do (work bounded by 32 x max_points).
"""

from __future__ import annotations

import sqlite3

from .store import BLOCK_TABLES

MAX_POINTS_LIMIT = 10_000
PAGE_LIMIT = 1_000


def telemetry_page(
    conn: sqlite3.Connection, run_id: str, since_seq: int, max_points: int | None
) -> tuple[list[str], int | None]:
    """Sample bodies after `since_seq` (all, one page, or downsampled) and the next cursor."""
    row = conn.execute(
        "SELECT MIN(idx) FROM telemetry WHERE run_id=? AND seq>?", (run_id, since_seq)
    ).fetchone()
    if row is None or row[0] is None:
        return [], since_seq
    i0 = int(row[0])
    end_row = conn.execute(
        "SELECT idx, seq FROM telemetry WHERE run_id=? ORDER BY idx DESC LIMIT 1", (run_id,)
    ).fetchone()
    total, last_seq = int(end_row[0]) + 1, int(end_row[1])
    n = total - i0
    if max_points is None:
        rows = conn.execute(
            "SELECT seq, body FROM telemetry WHERE run_id=? AND idx>=? ORDER BY idx LIMIT ?",
            (run_id, i0, PAGE_LIMIT),
        ).fetchall()
        return [str(b) for _s, b in rows], int(rows[-1][0])
    if n <= max_points:
        rows = conn.execute(
            "SELECT body FROM telemetry WHERE run_id=? AND idx>=? ORDER BY idx", (run_id, i0)
        ).fetchall()
        return [str(r[0]) for r in rows], last_seq
    buckets = max(1, max_points // 2)
    keep = _extremes(conn, run_id, i0, n, buckets)
    bodies: list[str] = []
    ordered = sorted(keep)
    for start in range(0, len(ordered), 900):
        chunk = ordered[start : start + 900]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT body FROM telemetry WHERE run_id=? AND idx IN ({marks}) ORDER BY idx",  # noqa: S608 - only '?' marks are interpolated
            (run_id, *chunk),
        ).fetchall()
        bodies.extend(str(r[0]) for r in rows)
    return bodies, last_seq


def _extremes(conn: sqlite3.Connection, run_id: str, i0: int, n: int, buckets: int) -> set[int]:
    """The idx of the min- and max-loss sample of each bucket of [i0, i0 + n)."""
    best: dict[int, tuple[float, int, float, int]] = {}

    def fold(bucket: int, lo: float, lo_idx: int, hi: float, hi_idx: int) -> None:
        cur = best.get(bucket)
        if cur is None:
            best[bucket] = (lo, lo_idx, hi, hi_idx)
            return
        best[bucket] = (
            *((lo, lo_idx) if lo < cur[0] else (cur[0], cur[1])),
            *((hi, hi_idx) if hi > cur[2] else (cur[2], cur[3])),
        )

    tiers = [(size, table) for size, table in BLOCK_TABLES if n // buckets >= size]
    if tiers:
        # Raw samples up to the first whole fine block; then each tier's whole blocks
        # up to where the next, coarser tier's whole blocks begin; the coarsest tier
        # runs to the end (its last block may be partial: it holds what exists).
        first = -(-i0 // tiers[0][0])
        head = conn.execute(
            "SELECT idx, loss FROM telemetry WHERE run_id=? AND idx>=? AND idx<?",
            (run_id, i0, first * tiers[0][0]),
        ).fetchall()
        for idx, loss in head:
            fold(0, loss, idx, loss, idx)
        for k, (size, table) in enumerate(tiers):
            end = None
            if k + 1 < len(tiers):
                coarse = tiers[k + 1][0]
                next_first = -(-first * size // coarse)
                end = next_first * coarse // size
            # SQLite returns the bare column of the row that holds the MIN()/MAX() of a group.
            for sql in ("MIN(min_loss), min_idx", "MAX(max_loss), max_idx"):
                rows = conn.execute(
                    f"SELECT MIN((block*{size}-?)*?/?, ?), {sql} FROM {table}"  # noqa: S608 - constant SQL fragments
                    " WHERE run_id=? AND block>=? AND block<? GROUP BY 1",
                    (i0, buckets, n, buckets - 1, run_id, first, end if end is not None else 2**62),
                ).fetchall()
                for bucket, loss, idx in rows:
                    fold(int(bucket), loss, int(idx), loss, int(idx))
            if end is not None:
                first = end * size // tiers[k + 1][0]
    else:
        for agg in ("MIN", "MAX"):
            rows = conn.execute(
                f"SELECT (idx-?)*?/?, {agg}(loss), idx FROM telemetry"  # noqa: S608 - constant SQL fragments
                " WHERE run_id=? AND idx>=? GROUP BY 1",
                (i0, buckets, n, run_id, i0),
            ).fetchall()
            for bucket, loss, idx in rows:
                fold(int(bucket), loss, int(idx), loss, int(idx))
    keep: set[int] = set()
    for _lo, lo_idx, _hi, hi_idx in best.values():
        keep.add(lo_idx)
        keep.add(hi_idx)
    return keep
