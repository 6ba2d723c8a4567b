"""`GET /v1/runs/{id}/logs` (SSE) and `GET /v1/runs/{id}/logs/page`: the run's job log.

The stream works like the event stream (`sse.py`): `retry: 3000` first, a `: keepalive`
comment every `heartbeat_s`, `id:` = the line's seq, `event: log`, `data:` a LogLine.

- Position: `Last-Event-ID` (else `since_seq=`) resumes exactly after that seq; without
  either, `tail=N` (default 200) replays the last N lines that MATCH the filters, then
  the stream goes live from the log's current end.
- Filters (`rank=`…, `level=` minimum, `source=`…, `q=` case-insensitive substring)
  apply to the replay and to live lines alike. A line without a rank (the kernel's,
  the lighthouse's) never matches a `rank=` filter.
- A resume older than retention gets one `event: log.truncated`, `data: {"dropped": n}`
  (n lines are gone, whatever the filters), with `id:` just before the oldest line
  kept, then the lines from there. The same happens mid-stream to a reader so slow that
  retention overtook it.
- After the run has ended and every line is sent, the stream closes. A request with
  nothing left to send for an ended run (a resume at or past its last matching line,
  or a tail with no match) answers 204 No Content: EventSource's signal to stop.

Lines are read in batches and sent as one chunk of pre-encoded messages per batch (the
stored bodies are the wire JSON), so a `log-flood` costs one write per batch, not one
per line.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from ito_tui.contract import LogLevel, LogPage, LogSource

from .guards import DeskDep, Operator
from .joblog_store import LogQuery
from .problems import ApiError
from .runtime import Desk
from .sse import RETRY_MS, position

BATCH = 500
SCAN_WINDOW = 20_000
"""Seqs one query scans at most: bounds how long a filtered scan holds the event loop."""
PAGE_LIMIT_MAX = 1000
TAIL_MAX = 100_000

router = APIRouter(tags=["runs"])


async def logs_wired(desk: DeskDep) -> None:
    """A scaffold backend has no job logs: 501 naming `runs.logs`, as the real one would."""
    if desk.config.mode == "scaffold":
        raise ApiError(
            "capability.not_implemented",
            "job logs are not wired on this backend yet",
            capability="runs.logs",
        )


Wired = Annotated[None, Depends(logs_wired)]


async def log_query(
    rank: Annotated[
        list[Annotated[int, Query(ge=0, le=2**31)]] | None,
        Query(description="Only these ranks (repeatable)."),
    ] = None,
    level: Annotated[LogLevel | None, Query(description="Minimum level.")] = None,
    source: Annotated[list[LogSource] | None, Query(description="Only these sources.")] = None,
    q: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="Case-insensitive substring."),
    ] = None,
) -> LogQuery:
    return LogQuery(
        ranks=tuple(sorted(set(rank or ()))),
        level=level.value if level else None,
        sources=tuple(sorted({s.value for s in source or ()})),
        q=q,
    )


Filters = Annotated[LogQuery, Depends(log_query)]


def frames(rows: list[tuple[int, str]]) -> bytes:
    """SSE messages of stored lines (bodies are ASCII JSON: no line break inside)."""
    return "".join(
        f"id: {seq}\r\nevent: log\r\ndata: {body}\r\n\r\n" for seq, body in rows
    ).encode()


def truncated(dropped: int, resume_at: int) -> bytes:
    return (
        f'id: {resume_at}\r\nevent: log.truncated\r\ndata: {{"dropped":{dropped}}}\r\n\r\n'.encode()
    )


def gap(desk: Desk, run_id: str, last: int) -> tuple[bytes, int] | None:
    """The `log.truncated` message (and the new position) if lines after `last` are gone."""
    first = desk.joblog.store.first_seq(run_id)
    if first is None or last >= first - 1:
        return None
    return truncated(first - 1 - last, first - 1), first - 1


async def newest(
    desk: Desk, run_id: str, query: LogQuery, before: int, want: int, *, floor: int = 0
) -> list[tuple[int, str]]:
    """The newest `want` matching lines in [floor, before), oldest first.

    Scanned back `SCAN_WINDOW` seqs at a time with the event loop let go in between: a
    `q=` is a scan, and 100,000 lines at once would stall every run and stream."""
    logs = desk.joblog.store
    got: list[tuple[int, str]] = []
    while len(got) < want:
        low = max(logs.first_seq(run_id) or before, before - SCAN_WINDOW, floor)
        if low >= before:
            break
        got = logs.before(run_id, before, low, query, want - len(got)) + got
        before = low
        await asyncio.sleep(0)
    return got


async def stream(
    desk: Desk, run_id: str, query: LogQuery, last: int
) -> AsyncIterator[ServerSentEvent | bytes]:
    yield ServerSentEvent(retry=RETRY_MS)
    logs = desk.joblog.store
    while True:
        # One synchronous block: nothing commits between these reads (one event loop),
        # and a run that had ended before them has every line of it in the table.
        version = desk.version(run_id)
        ended = run_id not in desk.engines
        lost = gap(desk, run_id, last)
        if lost is not None:
            message, last = lost
            yield message
            continue
        end = logs.last_seq(run_id)
        upto = min(end, last + SCAN_WINDOW)
        rows = logs.after(run_id, last, upto, query, BATCH)
        # A short batch covers the whole window: the next query need not rescan it.
        last = max(last, upto) if len(rows) < BATCH else rows[-1][0]
        if rows:
            yield frames(rows)
            # Writing to a socket with room awaits nothing: let the loop run (the ticks,
            # other clients, and the disconnect listener that ends this stream).
            await asyncio.sleep(0)
        elif last < end:
            await asyncio.sleep(0)  # a window of lines that did not match: scan on
        elif ended:
            return
        else:
            await desk.wait(run_id, version, desk.config.heartbeat_s)


@router.get(
    "/v1/runs/{run_id}/logs",
    response_class=EventSourceResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "The run's log lines as SSE (`id:` = seq, `event: log`, "
            "`data:` LogLine; `event: log.truncated` `data: {dropped}` past retention).",
        },
        204: {"description": "The run has ended and nothing is left to send: stop."},
    },
)
async def logs(
    run_id: str,
    desk: DeskDep,
    _operator: Operator,
    _wired: Wired,
    query: Filters,
    tail: Annotated[int, Query(ge=0, le=TAIL_MAX, description="Replay this many.")] = 200,
    since_seq: Annotated[int | None, Query(ge=0, le=2**53)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
) -> Response:
    """Stream the run's job log: the last `tail` matching lines (or from a seq), then live."""
    if desk.store.run(run_id) is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    logs_ = desk.joblog.store
    ended = run_id not in desk.engines
    if bool(last_event_id and last_event_id.strip()) or since_seq is not None:
        last = position(last_event_id, since_seq)
        end = logs_.last_seq(run_id)
        pending = gap(desk, run_id, last) is not None or bool(
            await newest(desk, run_id, query, end + 1, 1, floor=last + 1)
        )
    else:
        end = logs_.last_seq(run_id)
        # The tail: replay from just before the tail-th newest match (the stream sends
        # the matching lines from there), or only what comes next.
        head = await newest(desk, run_id, query, end + 1, tail) if tail else []
        last = head[0][0] - 1 if head else end
        pending = bool(head)
    if ended and not pending:
        return Response(status_code=204)
    return EventSourceResponse(
        stream(desk, run_id, query, last),
        ping=desk.config.heartbeat_s,
        ping_message_factory=lambda: ServerSentEvent(comment="keepalive"),
        headers={"Cache-Control": "no-store"},
    )


@router.get("/v1/runs/{run_id}/logs/page", response_model=LogPage)
async def log_page(
    run_id: str,
    desk: DeskDep,
    _operator: Operator,
    _wired: Wired,
    query: Filters,
    before_seq: Annotated[int | None, Query(ge=1, le=2**53)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_LIMIT_MAX)] = 500,
) -> Response:
    """The newest `limit` matching lines before `before_seq` (default: the end), oldest
    first; `next_before_seq` asks for the page before it (null: nothing older)."""
    if desk.store.run(run_id) is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    end = desk.joblog.store.last_seq(run_id) + 1
    before = end if before_seq is None else min(before_seq, end)
    rows = await newest(desk, run_id, query, before, limit + 1)
    older = len(rows) > limit
    rows = rows[-limit:]
    nxt = str(rows[0][0]) if older else "null"
    content = '{"items":[' + ",".join(b for _s, b in rows) + '],"next_before_seq":' + nxt + "}"
    return Response(content, media_type="application/json")
