"""The decision trail's storage: every proposal across runs, newest first (`GET /v1/proposals`).

Proposals are ordered by `created_at`, then `proposal_id`, both descending, and paged by
keyset: a cursor carries the (created_at, proposal_id) of the last item it followed, so
each page is one index range scan whatever the filters, and a proposal created while an
operator pages through the trail never shifts the pages after it (it is newer, so it
lands before the first page). `created_at` is stored as the simulator writes it
(`core.iso`: millisecond RFC 3339 UTC, four-digit years), so text order is time order.

Each filter has an index ending in (created_at, proposal_id): `status` (pending ones are
what an operator's watcher polls), `run_id`, `decided_by`, and none. `decided_by` is a
column of its own (the body holds it too), added to databases written before the trail.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["prepare", "proposals_page", "since_key"]

INDEXES = (
    "CREATE INDEX IF NOT EXISTS proposals_created ON proposals(created_at, proposal_id)",
    "CREATE INDEX IF NOT EXISTS proposals_run_created ON proposals(run_id, created_at,"
    " proposal_id)",
    "CREATE INDEX IF NOT EXISTS proposals_status_created ON proposals(status, created_at,"
    " proposal_id)",
    "CREATE INDEX IF NOT EXISTS proposals_decider_created ON proposals(decided_by, created_at,"
    " proposal_id)",
    # proposals_run_created serves every query the older run_id-only index did.
    "DROP INDEX IF EXISTS proposals_run",
)


def prepare(conn: sqlite3.Connection) -> None:
    """Add the `decided_by` column (filled from the bodies) and the trail's indexes.

    Run inside one write transaction, so a kill halfway leaves the old schema, and
    the next start does it again.
    """
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(proposals)")}
    if "decided_by" not in columns:
        conn.execute("ALTER TABLE proposals ADD COLUMN decided_by TEXT")
        conn.execute("UPDATE proposals SET decided_by=json_extract(body, '$.decided_by')")
    for statement in INDEXES:
        conn.execute(statement)


def since_key(value: datetime) -> str:
    """`value` as the stored text a `created_at >= value` comparison needs.

    Stored times have millisecond precision, so `created_at >= value` holds exactly
    when `created_at >= value` rounded up to the millisecond. Raises OverflowError for
    a time that leaves datetime's range once in UTC (year 1 with a positive offset).
    """
    utc = value.astimezone(UTC)
    if utc.microsecond % 1000:
        utc += timedelta(microseconds=1000 - utc.microsecond % 1000)
    # isoformat pads the year to four digits (strftime's %Y does not for years < 1000).
    return utc.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def proposals_page(
    conn: sqlite3.Connection,
    *,
    status: str | None,
    run_id: str | None,
    decided_by: str | None,
    since: str | None,
    after: tuple[str, str] | None,
    limit: int,
) -> list[tuple[str, str, str]]:
    """(created_at, proposal_id, body) of up to `limit` proposals, newest first.

    `since` is a `since_key`; `after` the (created_at, proposal_id) a page ended on.
    """
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("status", status), ("run_id", run_id), ("decided_by", decided_by)):
        if value is not None:
            where.append(f"{column}=?")
            args.append(value)
    if since is not None:
        where.append("created_at>=?")
        args.append(since)
    if after is not None:
        where.append("(created_at, proposal_id)<(?, ?)")
        args.extend(after)
    sql = "SELECT created_at, proposal_id, body FROM proposals"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, proposal_id DESC LIMIT ?"
    args.append(limit)
    return [(str(c), str(p), str(b)) for c, p, b in conn.execute(sql, args).fetchall()]
