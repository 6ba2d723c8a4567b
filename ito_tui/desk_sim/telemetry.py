"""Telemetry pages with server-side, min/max-preserving downsampling to `max_points`.

Samples are numbered 0..n-1 per run (`idx`) and folded on insert into blocks of
64 holding each block's min- and max-loss sample. A downsampled page splits the
requested range into `max_points // 2` buckets and keeps, per bucket, the
sample with the lowest and the one with the highest loss, so spikes and dips
survive. When buckets span at least one block the blocks answer (work bounded
by n / 64); otherwise the raw rows do (work bounded by 32 x max_points).

A step range (`from_step`/`to_step`, inclusive) picks the samples first: the few idx spans
`steps.step_spans` finds (a rewound stretch's two samples per step both count), and
everything above works on those spans as on one series: `since_seq` pages through them,
`max_points` buckets them (blocks wholly inside a span answer, raw rows at its edges), so
a narrow range of a long run costs what a run of that range's length would.

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

from .steps import step_spans
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
    steps: tuple[int | None, int | None] = (None, None),
) -> tuple[list[str], int | None]:
    """Sample bodies after `since_seq` (all, one page, or downsampled) and the next cursor;
    with `metrics`, each body's `metrics` holds only those names; with `steps` (from, to:
    inclusive, either None for open), only samples of those steps count (module docstring)."""
    names = tuple(dict.fromkeys(metrics))
    bodies, nxt = _page(conn, run_id, since_seq, max_points, names, steps)
    if metrics:
        bodies = [_only(body, metrics) for body in bodies]
    return bodies, nxt


def _only(body: str, names: Sequence[str]) -> str:
    """`body` with its `metrics` cut to `names` (non-finite values stay "NaN" strings)."""
    sample = json.loads(body)
    held = sample.get("metrics") or {}
    sample["metrics"] = {name: held[name] for name in names if name in held}
    return json.dumps(sample, separators=(",", ":"))


Spans = list[tuple[int, int]]
"""Half-open idx ranges, in idx order: the samples a request counts."""


def _page(
    conn: sqlite3.Connection,
    run_id: str,
    since_seq: int,
    max_points: int | None,
    metrics: tuple[str, ...],
    steps: tuple[int | None, int | None],
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
    spans: Spans = [(i0, total)]
    if steps != (None, None):
        lo, hi = steps
        spans = step_spans(conn, run_id, lo or 0, 2**62 if hi is None else hi, i0, total)
    n = sum(b - a for a, b in spans)
    if max_points is None:
        bodies: list[str] = []
        nxt = since_seq
        for a, b in spans:
            rows = conn.execute(
                "SELECT seq, body FROM telemetry WHERE run_id=? AND idx>=? AND idx<?"
                " ORDER BY idx LIMIT ?",
                (run_id, a, b, PAGE_LIMIT - len(bodies)),
            ).fetchall()
            bodies.extend(str(body) for _s, body in rows)
            if rows:
                nxt = int(rows[-1][0])
            if len(bodies) >= PAGE_LIMIT:
                break
        return bodies, nxt
    if n <= max_points:
        return _bodies(conn, run_id, [i for a, b in spans for i in range(a, b)]), last_seq
    if metrics:
        buckets = max(1, (max_points - 1) // (2 * (len(metrics) + 1)))
        keep = _extremes(conn, run_id, spans, n, buckets)
        keep |= _metric_extremes(conn, run_id, spans, n, buckets, metrics)
        keep.add(spans[-1][1] - 1)
    else:
        buckets = max(1, max_points // 2)
        keep = _extremes(conn, run_id, spans, n, buckets)
    return _bodies(conn, run_id, sorted(keep)), last_seq


def _bodies(conn: sqlite3.Connection, run_id: str, ordered: Sequence[int]) -> list[str]:
    """The bodies of the samples at `ordered` (idx, increasing)."""
    bodies: list[str] = []
    for start in range(0, len(ordered), 900):
        chunk = ordered[start : start + 900]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT body FROM telemetry WHERE run_id=? AND idx IN ({marks}) ORDER BY idx",  # noqa: S608 - only '?' marks are interpolated
            (run_id, *chunk),
        ).fetchall()
        bodies.extend(str(r[0]) for r in rows)
    return bodies


def _cover(a: int, b: int, sizes: Sequence[int]) -> list[tuple[int, int, int]]:
    """[a, b) as (size, lo, hi) pieces: whole blocks of the coarsest size that fit, then
    finer ones at the edges, raw samples (size 0) at the very edges."""
    if a >= b:
        return []
    if not sizes:
        return [(0, a, b)]
    size = sizes[-1]
    lo, hi = -(-a // size) * size, b // size * size
    if lo >= hi:
        return _cover(a, b, sizes[:-1])
    return [*_cover(a, lo, sizes[:-1]), (size, lo, hi), *_cover(hi, b, sizes[:-1])]


def _extremes(
    conn: sqlite3.Connection, run_id: str, spans: Spans, n: int, buckets: int
) -> set[int]:
    """The idx of the min- and max-loss sample of each bucket of the `n` samples of `spans`.

    A sample's bucket is its position among them; a block's, its first sample's. Blocks
    are read when a bucket spans at least one (work bounded by n / 64 rows, n / 1024 where
    the coarser blocks fit), raw rows otherwise and at the spans' edges."""
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

    tables = {size: table for size, table in BLOCK_TABLES if n // buckets >= size}
    offset = 0
    for a, b in spans:
        for size, lo, hi in _cover(a, b, sorted(tables)):
            if size:
                table, unit, first, end = tables[size], f"block*{size}", lo // size, hi // size
                columns = ("MIN(min_loss), min_idx", "MAX(max_loss), max_idx")
                where = "block>=? AND block<?"
            else:
                table, unit, first, end = "telemetry", "idx", lo, hi
                columns = ("MIN(loss), idx", "MAX(loss), idx")
                where = "idx>=? AND idx<?"
            # SQLite returns the bare column of the row that holds the MIN()/MAX() of a group.
            for sql in columns:
                rows = conn.execute(
                    f"SELECT MIN(({unit}-?+?)*?/?, ?), {sql} FROM {table}"  # noqa: S608 - constant SQL fragments
                    f" WHERE run_id=? AND {where} GROUP BY 1",
                    (a, offset, buckets, n, buckets - 1, run_id, first, end),
                ).fetchall()
                for bucket, loss, idx in rows:
                    fold(int(bucket), loss, int(idx), loss, int(idx))
        offset += b - a
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
    spans: Spans,
    n: int,
    buckets: int,
    names: Sequence[str],
) -> set[int]:
    """The idx of each named metric's min and max sample per bucket of the `n` samples of
    `spans` (buckets as in `_extremes`).

    NaN ranks above +Infinity and wins a tie with it, so a NaN in a bucket is kept."""
    paths = ["$.metrics." + json.dumps(name) for name in names]
    columns = ", ".join("json_extract(body, ?)" for _ in names)
    lo: dict[tuple[int, int], tuple[float, int]] = {}
    hi: dict[tuple[int, int], tuple[float, int, bool]] = {}
    offset = 0
    for a, b in spans:
        rows = conn.execute(
            f"SELECT idx, {columns} FROM telemetry WHERE run_id=? AND idx>=? AND idx<?"  # noqa: S608 - only '?' marks are interpolated
            " ORDER BY idx",
            (*paths, run_id, a, b),
        )
        for row in rows:
            idx = int(row[0])
            bucket = min((idx - a + offset) * buckets // n, buckets - 1)
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
        offset += b - a
    return {idx for _v, idx in lo.values()} | {h[1] for h in hi.values()}
