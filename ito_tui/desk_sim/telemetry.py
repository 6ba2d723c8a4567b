"""Telemetry pages with server-side, min/max-preserving downsampling to `max_points`.

Samples are numbered 0..n-1 per run (`idx`) and folded on insert into blocks of
64 holding each block's min- and max-loss sample. A downsampled page splits the
requested range into `max_points // 2` buckets and keeps, per bucket, the
sample with the lowest and the one with the highest loss, so spikes and dips
survive. When buckets span at least one block the blocks answer (work bounded
by n / 64); otherwise the raw rows do (work bounded by 32 x max_points).

Open metrics (`metric=NAME`, repeatable; API.md v1.1): every stored sample carries its
`metrics{}`; a page asked for named metrics carries only those in each item's `metrics`
(a name a sample lacks is simply absent). Downsampled, each bucket keeps, besides the
min- and max-loss samples, the samples holding each named metric's min and max, and the
range's last sample is always kept (its values are the latest): items stay real samples,
so a chart shows every metric's extremes at the steps they happened. With k names the
buckets shrink to `(max_points - 1) // (2 (k + 1))` so a page never exceeds `max_points`.
A NaN takes the max slot (a divergence is never hidden), +-Infinity are extremes like
any number, null is no value. These extremes come from the raw rows (work bounded by
n x k): desk_sim's runs hold at most a few thousand samples.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence

from .store import BLOCK_TABLES

MAX_POINTS_LIMIT = 10_000
PAGE_LIMIT = 1_000
MAX_METRICS = 16
"""Names one telemetry request may ask for (`metric=`, repeatable)."""


def telemetry_page(
    conn: sqlite3.Connection,
    run_id: str,
    since_seq: int,
    max_points: int | None,
    metrics: Sequence[str] = (),
) -> tuple[list[str], int | None]:
    """Sample bodies after `since_seq` (all, one page, or downsampled) and the next cursor;
    with `metrics`, each body's `metrics` holds only those names (module docstring)."""
    bodies, nxt = _page(conn, run_id, since_seq, max_points, tuple(dict.fromkeys(metrics)))
    if metrics:
        bodies = [_only(body, metrics) for body in bodies]
    return bodies, nxt


def _only(body: str, names: Sequence[str]) -> str:
    """`body` with its `metrics` cut to `names` (non-finite values stay "NaN" strings)."""
    sample = json.loads(body)
    held = sample.get("metrics") or {}
    sample["metrics"] = {name: held[name] for name in names if name in held}
    return json.dumps(sample, separators=(",", ":"))


def _page(
    conn: sqlite3.Connection,
    run_id: str,
    since_seq: int,
    max_points: int | None,
    metrics: tuple[str, ...],
) -> tuple[list[str], int | None]:
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
    if metrics:
        buckets = max(1, (max_points - 1) // (2 * (len(metrics) + 1)))
        keep = _extremes(conn, run_id, i0, n, buckets)
        keep |= _metric_extremes(conn, run_id, i0, n, buckets, metrics)
        keep.add(total - 1)
    else:
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


def _rank(value: object) -> float | None:
    """A stored metric value as an orderable number: NaN above +Infinity; null is None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return math.inf if math.isnan(value) else float(value)
    if value == "NaN":
        return math.inf
    if value in ("Infinity", "-Infinity"):
        return math.inf if value == "Infinity" else -math.inf
    return None


def _metric_extremes(
    conn: sqlite3.Connection,
    run_id: str,
    i0: int,
    n: int,
    buckets: int,
    names: Sequence[str],
) -> set[int]:
    """The idx of each named metric's min and max sample per bucket of [i0, i0 + n).

    NaN ranks above +Infinity and wins a tie with it, so a NaN in a bucket is kept."""
    paths = ["$.metrics." + json.dumps(name) for name in names]
    columns = ", ".join("json_extract(body, ?)" for _ in names)
    rows = conn.execute(
        f"SELECT idx, {columns} FROM telemetry WHERE run_id=? AND idx>=? ORDER BY idx",  # noqa: S608 - only '?' marks are interpolated
        (*paths, run_id, i0),
    )
    lo: dict[tuple[int, int], tuple[float, int]] = {}
    hi: dict[tuple[int, int], tuple[float, int, bool]] = {}
    for row in rows:
        idx = int(row[0])
        bucket = min((idx - i0) * buckets // n, buckets - 1)
        for k, raw in enumerate(row[1:]):
            value = _rank(raw)
            if value is None:
                continue
            key = (bucket, k)
            nan = raw == "NaN"
            if key not in lo or value < lo[key][0]:
                lo[key] = (value, idx)
            best = hi.get(key)
            if best is None or value > best[0] or (nan and not best[2]):
                hi[key] = (value, idx, nan)
    return {idx for _v, idx in lo.values()} | {h[1] for h in hi.values()}
