"""SQLite (WAL) storage of the simulated backend: runs, events, proposals, keys, state.

Every simulator tick commits its new events, telemetry, checkpoints, proposals,
the engine's serialised state and the run snapshot in ONE transaction, so a
SIGKILL at any moment leaves a consistent database: a restart continues each
run from its last committed state and `seq` stays gap-free.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import steps, trail
from .dblock import exclusive, lock_path_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  run_id TEXT PRIMARY KEY, booking_id TEXT NOT NULL, operator TEXT NOT NULL,
  state TEXT NOT NULL, terminal INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL,
  last_seq INTEGER NOT NULL, snapshot TEXT NOT NULL, engine TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS runs_booking ON runs(booking_id, terminal);
CREATE TABLE IF NOT EXISTS events(
  run_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS telemetry(
  run_id TEXT NOT NULL, idx INTEGER NOT NULL, seq INTEGER NOT NULL, loss REAL NOT NULL,
  body TEXT NOT NULL, PRIMARY KEY(run_id, idx)) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS telemetry_seq ON telemetry(run_id, seq);
CREATE TABLE IF NOT EXISTS telemetry_blocks(
  run_id TEXT NOT NULL, block INTEGER NOT NULL, n INTEGER NOT NULL,
  min_loss REAL NOT NULL, min_idx INTEGER NOT NULL,
  max_loss REAL NOT NULL, max_idx INTEGER NOT NULL,
  PRIMARY KEY(run_id, block)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS telemetry_blocks_1k(
  run_id TEXT NOT NULL, block INTEGER NOT NULL, n INTEGER NOT NULL,
  min_loss REAL NOT NULL, min_idx INTEGER NOT NULL,
  max_loss REAL NOT NULL, max_idx INTEGER NOT NULL,
  PRIMARY KEY(run_id, block)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS proposals(
  proposal_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, status TEXT NOT NULL,
  created_at TEXT NOT NULL, body TEXT NOT NULL, decided_by TEXT);
CREATE TABLE IF NOT EXISTS checkpoints(
  run_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, ord INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY(run_id, checkpoint_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency(
  operator TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
  status INTEGER, headers TEXT, body TEXT, created REAL NOT NULL,
  PRIMARY KEY(operator, key)) WITHOUT ROWID;
"""

BLOCK = 64
"""Telemetry samples per pre-aggregated min/max block (see `telemetry.py`)."""
SUPER_BLOCK = 16 * BLOCK
"""Samples per coarser min/max block: smaller than a bucket of a 600-point view of 10^6
samples (3,333), so such a query reads ~1,000 rows instead of ~15,600."""
BLOCK_TABLES = ((BLOCK, "telemetry_blocks"), (SUPER_BLOCK, "telemetry_blocks_1k"))


@dataclass(frozen=True)
class RunRow:
    run_id: str
    booking_id: str
    operator: str
    state: str
    terminal: bool
    last_seq: int
    snapshot: str
    engine: str


@dataclass(frozen=True)
class IdemRecord:
    fingerprint: str
    state: str
    status: int | None
    headers: str | None
    body: str | None
    created: float


class Store:
    """One SQLite connection, used from the thread that opened it only.

    That is the server's event-loop thread: the ticks and every route (all `async
    def`) run there, so no two transactions ever interleave on the connection.
    sqlite3's `check_same_thread` enforces it: a call from any other thread (a plain
    `def` route in FastAPI's thread pool) raises `sqlite3.ProgrammingError` instead.
    """

    def __init__(self, path: Path | None) -> None:
        if path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="ito-sim-")
            path = Path(self._tmp.name) / "sim.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = exclusive(lock_path_of(path), path)
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=True)
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a process kill (only power loss can drop a commit).
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA busy_timeout=5000")
        self.conn.executescript(SCHEMA + steps.SCHEMA)
        with self.tx():
            trail.prepare(self.conn)
        self._backfill_superblocks()
        with self.tx():
            steps.backfill_segments(self.conn)

    def close(self) -> None:
        self.conn.close()
        if self._lock is not None:
            self._lock.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: everything inside commits together or not at all."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ------------------------------------------------------------ meta

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------ runs

    def save_run(self, row: RunRow, created_at: str) -> None:
        self.conn.execute(
            "INSERT INTO runs(run_id, booking_id, operator, state, terminal, created_at, last_seq,"
            " snapshot, engine) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(run_id) DO UPDATE SET"
            " state=excluded.state, terminal=excluded.terminal, last_seq=excluded.last_seq,"
            " snapshot=excluded.snapshot, engine=excluded.engine",
            (
                row.run_id,
                row.booking_id,
                row.operator,
                row.state,
                int(row.terminal),
                created_at,
                row.last_seq,
                row.snapshot,
                row.engine,
            ),
        )

    def run(self, run_id: str) -> RunRow | None:
        row = self.conn.execute(
            "SELECT run_id, booking_id, operator, state, terminal, last_seq, snapshot, engine"
            " FROM runs WHERE run_id=?",
            (run_id,),
        ).fetchone()
        return None if row is None else _run_row(row)

    def active_runs(self) -> list[RunRow]:
        rows = self.conn.execute(
            "SELECT run_id, booking_id, operator, state, terminal, last_seq, snapshot, engine"
            " FROM runs WHERE terminal=0 ORDER BY rowid"
        ).fetchall()
        return [_run_row(r) for r in rows]

    def active_run_by_booking(self) -> dict[str, str]:
        rows = self.conn.execute("SELECT booking_id, run_id FROM runs WHERE terminal=0").fetchall()
        return {str(b): str(r) for b, r in rows}

    def list_runs(
        self, *, state: str | None, booking_id: str | None, after: int | None, limit: int
    ) -> list[tuple[int, str]]:
        """(rowid, snapshot) of runs, newest first, strictly older than rowid `after`."""
        sql = "SELECT rowid, snapshot FROM runs WHERE 1=1"
        args: list[Any] = []
        if state is not None:
            sql += " AND state=?"
            args.append(state)
        if booking_id is not None:
            sql += " AND booking_id=?"
            args.append(booking_id)
        if after is not None:
            sql += " AND rowid<?"
            args.append(after)
        sql += " ORDER BY rowid DESC LIMIT ?"
        args.append(limit)
        return [(int(r), str(s)) for r, s in self.conn.execute(sql, args).fetchall()]

    # ------------------------------------------------------------ events

    def add_events(self, run_id: str, events: list[tuple[int, str, str]], retention: int) -> None:
        """Append (seq, type, body) rows and drop what falls out of the retention window."""
        if not events:
            return
        self.conn.executemany(
            "INSERT INTO events(run_id, seq, type, body) VALUES (?,?,?,?)",
            [(run_id, seq, typ, body) for seq, typ, body in events],
        )
        last = events[-1][0]
        if last > retention:
            self.conn.execute(
                "DELETE FROM events WHERE run_id=? AND seq<=?", (run_id, last - retention)
            )

    def events_after(self, run_id: str, seq: int, limit: int = 500) -> list[tuple[int, str, str]]:
        return [
            (int(s), str(t), str(b))
            for s, t, b in self.conn.execute(
                "SELECT seq, type, body FROM events WHERE run_id=? AND seq>? ORDER BY seq LIMIT ?",
                (run_id, seq, limit),
            ).fetchall()
        ]

    def first_event_seq(self, run_id: str) -> int | None:
        row = self.conn.execute("SELECT MIN(seq) FROM events WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    # ------------------------------------------------------------ telemetry

    def add_telemetry(self, run_id: str, samples: list[tuple[int, int, float, str]]) -> None:
        """Append (idx, seq, loss, body) rows and fold them into their min/max blocks."""
        if not samples:
            return
        self.conn.executemany(
            "INSERT INTO telemetry(run_id, idx, seq, loss, body) VALUES (?,?,?,?,?)",
            [(run_id, i, s, loss, b) for i, s, loss, b in samples],
        )
        for size, table in BLOCK_TABLES:
            self._fold_blocks(table, run_id, size, [(i, loss) for i, _s, loss, _b in samples])
        steps.note_segments(self.conn, run_id, min(i for i, _s, _l, _b in samples))

    def _fold_blocks(
        self, table: str, run_id: str, size: int, points: list[tuple[int, float]]
    ) -> None:
        """Fold (idx, loss) points into `table`'s min/max blocks of `size` samples."""
        blocks: dict[int, list[Any]] = {}
        for i, loss in points:
            agg = blocks.get(i // size)
            if agg is None:
                blocks[i // size] = [1, loss, i, loss, i]
                continue
            agg[0] += 1
            if loss < agg[1]:
                agg[1], agg[2] = loss, i
            if loss > agg[3]:
                agg[3], agg[4] = loss, i
        self.conn.executemany(
            f"INSERT INTO {table}(run_id, block, n, min_loss, min_idx, max_loss, max_idx)"  # noqa: S608 - table from BLOCK_TABLES
            " VALUES (?,?,?,?,?,?,?) ON CONFLICT(run_id, block) DO UPDATE SET n=n+excluded.n,"
            " min_idx=CASE WHEN excluded.min_loss<min_loss THEN excluded.min_idx ELSE min_idx END,"
            " min_loss=MIN(min_loss, excluded.min_loss),"
            " max_idx=CASE WHEN excluded.max_loss>max_loss THEN excluded.max_idx ELSE max_idx END,"
            " max_loss=MAX(max_loss, excluded.max_loss)",
            [(run_id, block, *agg) for block, agg in blocks.items()],
        )

    def _backfill_superblocks(self) -> None:
        """Databases written before superblocks existed: build them once from the blocks."""
        if self.conn.execute("SELECT 1 FROM telemetry_blocks_1k LIMIT 1").fetchone():
            return
        runs = [r[0] for r in self.conn.execute("SELECT DISTINCT run_id FROM telemetry_blocks")]
        with self.tx():
            for run_id in runs:
                rows = self.conn.execute(
                    "SELECT min_idx, min_loss, max_idx, max_loss FROM telemetry_blocks"
                    " WHERE run_id=?",
                    (run_id,),
                ).fetchall()
                points = [(int(a), float(b)) for a, b, _c, _d in rows]
                points += [(int(c), float(d)) for _a, _b, c, d in rows]
                # n counts the folded points, not samples; only min/max are read from it.
                self._fold_blocks("telemetry_blocks_1k", run_id, SUPER_BLOCK, points)

    # ------------------------------------------------------------ proposals & checkpoints

    def save_proposal(
        self,
        proposal_id: str,
        run_id: str,
        status: str,
        created: str,
        body: str,
        decided_by: str | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO proposals(proposal_id, run_id, status, created_at, body, decided_by)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(proposal_id) DO UPDATE SET"
            " status=excluded.status, body=excluded.body, decided_by=excluded.decided_by",
            (proposal_id, run_id, status, created, body, decided_by),
        )

    def proposal(self, proposal_id: str) -> tuple[str, str] | None:
        """(run_id, body) of one proposal."""
        row = self.conn.execute(
            "SELECT run_id, body FROM proposals WHERE proposal_id=?", (proposal_id,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def proposals(self, run_id: str, status: str | None) -> list[str]:
        sql = "SELECT body FROM proposals WHERE run_id=?"
        args: list[Any] = [run_id]
        if status is not None:
            sql += " AND status=?"
            args.append(status)
        return [str(r[0]) for r in self.conn.execute(sql + " ORDER BY rowid", args).fetchall()]

    def add_checkpoint(self, run_id: str, checkpoint_id: str, body: str) -> None:
        self.conn.execute(
            "INSERT INTO checkpoints(run_id, checkpoint_id, ord, body) VALUES (?,?,"
            " (SELECT COUNT(*) FROM checkpoints WHERE run_id=?), ?)",
            (run_id, checkpoint_id, run_id, body),
        )

    def checkpoints(self, run_id: str) -> list[str]:
        return [
            str(r[0])
            for r in self.conn.execute(
                "SELECT body FROM checkpoints WHERE run_id=? ORDER BY ord", (run_id,)
            ).fetchall()
        ]

    # ------------------------------------------------------------ idempotency keys

    def idem(self, operator: str, key: str) -> IdemRecord | None:
        row = self.conn.execute(
            "SELECT fingerprint, state, status, headers, body, created FROM idempotency"
            " WHERE operator=? AND key=?",
            (operator, key),
        ).fetchone()
        return None if row is None else IdemRecord(*row)

    def idem_claim(self, operator: str, key: str, fingerprint: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO idempotency(operator, key, fingerprint, state, created)"
            " VALUES (?,?,?,'in_flight',?)",
            (operator, key, fingerprint, time.time()),
        )

    def idem_finish(self, operator: str, key: str, status: int, headers: str, body: str) -> None:
        self.conn.execute(
            "UPDATE idempotency SET state='done', status=?, headers=?, body=? WHERE operator=?"
            " AND key=?",
            (status, headers, body, operator, key),
        )

    def idem_release(self, operator: str, key: str) -> None:
        self.conn.execute("DELETE FROM idempotency WHERE operator=? AND key=?", (operator, key))


def _run_row(row: tuple[Any, ...]) -> RunRow:
    return RunRow(
        run_id=row[0],
        booking_id=row[1],
        operator=row[2],
        state=row[3],
        terminal=bool(row[4]),
        last_seq=int(row[5]),
        snapshot=row[6],
        engine=row[7],
    )
