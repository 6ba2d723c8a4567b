"""`GET /v1/runs/{id}/events`: the run's event stream as Server-Sent Events.

The stream sends `retry: 3000` first, then every stored event after the
client's position (`Last-Event-ID` header, else `?since_seq=`, else 0) with
`id:` = seq, then goes live; a `: keepalive` comment goes out every
`heartbeat_s`. If events the client still needs were dropped by retention it
gets one `resync` event (data: the full Run, id: its `last_event_seq`) instead.
After the terminal event the stream closes; a reconnect whose position is at or
past the terminal event of a finished run gets 204 No Content, the EventSource
signal to stop reconnecting.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from ito_tui.contract import TERMINAL_EVENT_TYPES, now_utc

from .core import iso
from .guards import DeskDep, Operator
from .problems import ApiError
from .runtime import Desk

RETRY_MS = 3000
BATCH = 500

router = APIRouter(tags=["runs"])


def position(last_event_id: str | None, since_seq: int | None) -> int:
    if last_event_id is not None and last_event_id.strip():
        text = last_event_id.strip()
        if not text.isdigit() or len(text) > 16:
            raise ApiError("request.invalid", "Last-Event-ID must be an event seq (an integer)")
        return int(text)
    return since_seq or 0


def resync_message(desk: Desk, run_id: str) -> tuple[ServerSentEvent, int, bool]:
    """A `resync` event carrying the full Run; (message, its seq, whether the run ended)."""
    # Read synchronously: the snapshot reflects exactly its last_event_seq.
    snapshot = json.loads(desk.snapshot(run_id) or "{}")
    last = int(snapshot["last_event_seq"])
    envelope = {
        "seq": last,
        "run_id": run_id,
        "type": "resync",
        "ts": iso(now_utc()),
        "sim_ts": None,
        "stage": snapshot.get("current_stage"),
        "data": snapshot,
    }
    ended = str(snapshot["state"]) in ("completed", "failed", "cancelled")
    return ServerSentEvent(json.dumps(envelope), event="resync", id=str(last)), last, ended


async def stream(desk: Desk, run_id: str, since: int) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(retry=RETRY_MS)
    last = since
    while True:
        version = desk.version(run_id)
        rows = desk.store.events_after(run_id, last, BATCH)
        if rows and rows[0][0] != last + 1:
            # Events this client still needs fell out of retention (at connect time, or
            # while it read too slowly): hand it the full Run instead of a silent gap.
            message, last, ended = resync_message(desk, run_id)
            yield message
            if ended:
                return
            continue
        for seq, type_, body in rows:
            yield ServerSentEvent(body, event=type_, id=str(seq))
            last = seq
            if type_ in TERMINAL_EVENT_TYPES:
                return
        if not rows:
            await desk.wait(run_id, version, desk.config.heartbeat_s)
        else:
            # A replay of a backlog awaits nothing between batches: hand the loop over, or
            # the ticks and every other client wait for the whole replay (the job log's
            # stream does the same).
            await asyncio.sleep(0)


@router.get(
    "/v1/runs/{run_id}/events",
    response_class=EventSourceResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "The run's events as SSE (`id:` = seq).",
        },
        204: {"description": "The client is at or past the terminal event: stop."},
    },
)
async def events(
    request: Request,
    run_id: str,
    desk: DeskDep,
    _operator: Operator,
    since_seq: Annotated[int | None, Query(ge=0, le=2**53)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
) -> Response:
    """Stream the run's events from the client's position, then live."""
    del request
    row = desk.store.run(run_id)
    if row is None:
        raise ApiError("run.not_found", f"no run {run_id}")
    since = position(last_event_id, since_seq)
    if row.terminal and since >= row.last_seq:
        return Response(status_code=204)
    return EventSourceResponse(
        stream(desk, run_id, since),
        ping=desk.config.heartbeat_s,
        ping_message_factory=lambda: ServerSentEvent(comment="keepalive"),
        headers={"Cache-Control": "no-store"},
    )
