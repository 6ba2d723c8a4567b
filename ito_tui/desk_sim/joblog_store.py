"""The job log's storage: the `logs` table, its queries, and the writer the desk commits with.

Lines are numbered per run (`seq` 1, 2, …) and written in the same transaction as the
events they were derived from (`runtime.Desk.commit` calls `JobLog.record` inside it),
so a SIGKILL loses nothing committed and a restart continues the numbering from the
table (`MAX(seq)`): no seq is ever given twice. Retention keeps the newest
`log_retention` lines of each run; a line longer than `log_line_bytes` UTF-8 bytes is
cut there (never inside a character) and marked `cut`.

Bodies are stored as the wire JSON (ASCII-escaped: no CR/LF or U+2028 can reach an SSE
`data:` line), so the routes splice them without re-encoding. `text`, `rank`,
`level_no` and `source` are columns for the filters of API.md (`rank=`, `level=`,
`source=`, `q=`, applied in SQL).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from json.encoder import encode_basestring_ascii as _ascii
from typing import Any

from ito_tui.contract import LOG_LEVEL_ORDER

from .core import JsonDict, iso, parse_iso
from .joblog import cut, lines_for
from .joblog_context import LogContext, context_of
from .joblog_flood import FLOOD_SCENARIO, flood_lines

SCHEMA = """
CREATE TABLE IF NOT EXISTS logs(
  run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL, rank INTEGER,
  level_no INTEGER NOT NULL, source TEXT NOT NULL, text TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
"""

LEVEL_NO = {str(level): i for i, level in enumerate(LOG_LEVEL_ORDER)}


def _json(value: object) -> str:
    """A JSON value: strings through the C encoder (ASCII, escapes every control)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _ascii(value)
    if type(value) is int:
        return str(value)
    return json.dumps(value)


def _body(
    seq: int, line: JsonDict, rank: object, level: str, source: str, text: str, was_cut: bool
) -> str:
    """A LogLine's wire JSON, assembled field by field: `json.dumps` of the whole dict was
    the flood's largest cost, and every field's type is known here."""
    return (
        f'{{"seq":{seq},"ts":{_json(line["ts"])},"sim_ts":{_json(line.get("sim_ts"))},'
        f'"rank":{_json(rank)},"node":{_json(line.get("node"))},'
        f'"replica_id":{_json(line.get("replica_id"))},"level":{_ascii(level)},'
        f'"source":{_ascii(source)},"text":{_ascii(text)},"cut":{"true" if was_cut else "false"}}}'
    )


def _icontains(text: str | None, needle: str) -> bool:
    return text is not None and needle in text.casefold()


@dataclass(frozen=True)
class LogQuery:
    """The filters of `/logs` and `/logs/page`: all must match (each list: any of)."""

    ranks: tuple[int, ...] = ()
    level: str | None = None
    sources: tuple[str, ...] = ()
    q: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        sql, args = "", list[Any]()
        if self.ranks:
            sql += f" AND rank IN ({','.join('?' * len(self.ranks))})"
            args += list(self.ranks)
        if self.level is not None:
            sql += " AND level_no>=?"
            args.append(LEVEL_NO[self.level])
        if self.sources:
            sql += f" AND source IN ({','.join('?' * len(self.sources))})"
            args += list(self.sources)
        if self.q:
            sql += " AND ito_icontains(text, ?)"
            args.append(self.q.casefold())
        return sql, args


class LogStore:
    """The `logs` table on the desk's one connection (same thread rules as `Store`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.executescript(SCHEMA)
        conn.create_function("ito_icontains", 2, _icontains, deterministic=True)

    def last_seq(self, run_id: str) -> int:
        """The seq of the run's newest line (0: none yet). Read from the table every time
        (one primary-key probe), so a rolled-back commit can never skip or reuse a seq."""
        row = self.conn.execute("SELECT MAX(seq) FROM logs WHERE run_id=?", (run_id,)).fetchone()
        return int(row[0] or 0)

    def first_seq(self, run_id: str) -> int | None:
        row = self.conn.execute("SELECT MIN(seq) FROM logs WHERE run_id=?", (run_id,)).fetchone()
        return None if row[0] is None else int(row[0])

    def append(
        self, run_id: str, lines: Sequence[JsonDict], *, line_bytes: int, retention: int
    ) -> int:
        """Number, cut and store `lines`; drop what falls out of retention. Inside a tx."""
        if not lines:
            return 0
        seq = self.last_seq(run_id)
        rows = []
        for line in lines:
            seq += 1
            text, was_cut = cut(str(line["text"]), line_bytes)
            rank, level, source = line.get("rank"), str(line["level"]), str(line["source"])
            rows.append(
                (run_id, seq, line["ts"], rank, LEVEL_NO.get(level, 1), source, text,
                 _body(seq, line, rank, level, source, text, was_cut))
            )  # fmt: skip
        self.conn.executemany("INSERT INTO logs VALUES (?,?,?,?,?,?,?,?)", rows)
        if seq > retention:
            self.conn.execute(
                "DELETE FROM logs WHERE run_id=? AND seq<=?", (run_id, seq - retention)
            )
        return len(rows)

    def after(
        self, run_id: str, seq: int, upto: int, query: LogQuery, limit: int
    ) -> list[tuple[int, str]]:
        """(seq, body) of matching lines in (seq, upto], oldest first, at most `limit`."""
        where, args = query.where()
        return self._rows(
            "SELECT seq, body FROM logs WHERE run_id=? AND seq>? AND seq<=?"  # noqa: S608 - placeholders only
            f"{where} ORDER BY seq LIMIT ?",
            [run_id, seq, upto, *args, limit],
        )

    def before(
        self, run_id: str, before_seq: int, floor: int, query: LogQuery, limit: int
    ) -> list[tuple[int, str]]:
        """(seq, body) of the newest `limit` matching lines in [floor, before_seq), oldest
        first."""
        where, args = query.where()
        rows = self._rows(
            "SELECT seq, body FROM logs WHERE run_id=? AND seq<? AND seq>=?"  # noqa: S608 - placeholders only
            f"{where} ORDER BY seq DESC LIMIT ?",
            [run_id, before_seq, floor, *args, limit],
        )
        rows.reverse()
        return rows

    def _rows(self, sql: str, args: list[Any]) -> list[tuple[int, str]]:
        return [(int(s), str(b)) for s, b in self.conn.execute(sql, args).fetchall()]


class JobLog:
    """Derives, numbers and stores each run's log lines as the desk commits its engines."""

    def __init__(self, conn: sqlite3.Connection, *, line_bytes: int, retention: int) -> None:
        self.store = LogStore(conn)
        self.line_bytes = line_bytes
        self.retention = retention
        self._flood_from: dict[str, tuple[float, datetime, str]] = {}
        """Per flooding run: (monotonic wall, wall clock, sim_ts) of its last record."""

    def record(self, state: JsonDict, events: Sequence[Any]) -> int:
        """Store the lines of one commit's events (and a flood's lines); returns how many."""
        run_id = str(state["run"]["run_id"])
        ctx = context_of(state)
        lines: list[JsonDict] = []
        if state.get("scenario") == FLOOD_SCENARIO:
            first = min((event.ts for event in events), default=None)
            lines += self._flood(run_id, state, ctx, first)
        for event in events:
            data = event.data.model_dump(mode="json") if hasattr(event, "data") else {}
            lines += lines_for(
                event.type,
                data,
                ctx,
                ts=iso(event.ts),
                sim_ts=iso(event.sim_ts) if event.sim_ts is not None else None,
            )
        if state.get("done"):
            self._flood_from.pop(run_id, None)
        return self.store.append(
            run_id, lines, line_bytes=self.line_bytes, retention=self.retention
        )

    def flooding(self, run_id: str) -> bool:
        """Whether `run_id` is a live `log-flood` run (its lines are due every tick)."""
        return run_id in self._flood_from

    def _flood(
        self, run_id: str, state: JsonDict, ctx: LogContext, first: datetime | None
    ) -> list[JsonDict]:
        """`log-flood`: the debug lines every rank wrote since the last record (wall clock).

        They go first in the commit, stamped (wall) between the last record's engine time
        and this one's (`updated_at`), or the `ts` of the first event this commit carries
        when that is earlier (an event is stamped when it was due, within the tick), and
        at the last record's simulated time, so both clocks stay in seq order. How many
        is the monotonic time elapsed times the rate.
        """
        mono = time.monotonic()
        run = state["run"]
        wall = parse_iso(str(run["updated_at"]))
        sim_now = iso(parse_iso(str(run["created_at"])) + timedelta(seconds=float(state["clock"])))
        last = self._flood_from.get(run_id)
        if last is not None and wall < last[1]:
            wall = last[1]  # the wall clock stepped back: never stamp before a stored line
        self._flood_from[run_id] = (mono, wall, sim_now)
        if last is None or state.get("done"):
            return []
        return flood_lines(
            ctx,
            first_seq=self.store.last_seq(run_id) + 1,
            elapsed_s=mono - last[0],
            since=last[1],
            until=wall if first is None else max(last[1], min(wall, first)),
            sim_ts=last[2],
        )
