"""The event-stream checks of `ito-tui check-backend`: framing, resume, the end of a stream."""

from __future__ import annotations

import asyncio
from typing import Any

from ito_tui.contract import TERMINAL_EVENT_TYPES, EventParseError, parse_event

from .body import iter_body, read_capped
from .conformance import (
    Answer,
    CheckFailed,
    ConformanceReport,
    Probe,
    SkipCheck,
    expect_status,
    run_check,
)
from .policy import MAX_SSE_LINE_BYTES
from .sse import SSEDecoder, SSEMessage

__all__ = ["SSE_READ_S", "read_sse", "sse_checks"]

SSE_READ_S = 10.0


async def read_sse(
    probe: Probe,
    path: str,
    last_event_id: str | None = None,
    limit: int = 50,
    params: dict[str, Any] | None = None,
    read_s: float = SSE_READ_S,
) -> tuple[Answer, list[SSEMessage], int | None]:
    """Open an event stream; read up to `limit` messages or until it closes/times out.

    Returns the answer (body empty for 2xx streams), the messages, and the
    first `retry:` value seen (milliseconds).
    """
    headers = {"Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    request = probe.http.build_request(
        "GET", path, params=params, headers={**probe.headers(), **headers}
    )
    response = await probe.http.send(request, stream=True)
    messages: list[SSEMessage] = []
    decoder = SSEDecoder(MAX_SSE_LINE_BYTES)
    try:
        if response.status_code != 200:
            body = await read_capped(response, 65536, "GET /v1/runs/{id}/events")
            return Answer(response.status_code, response.headers, body), [], None
        try:
            async with asyncio.timeout(read_s):
                async for chunk in iter_body(response, "GET /v1/runs/{id}/events"):
                    messages.extend(m for m in decoder.feed(chunk) if m.data)
                    if len(messages) >= limit:
                        break
        except TimeoutError:
            pass
    finally:
        await response.aclose()
    return Answer(response.status_code, response.headers, b""), messages, decoder.retry_ms


def _check_messages(messages: list[SSEMessage]) -> list[int]:
    """Each message is a valid envelope whose seq equals its id and whose type is its event."""
    seqs: list[int] = []
    for msg in messages:
        try:
            event = parse_event(msg.data)
        except EventParseError as exc:
            raise CheckFailed(f"event id {msg.id}: {exc}") from None
        if msg.id != str(event.seq):
            raise CheckFailed(f"SSE id {msg.id!r} differs from envelope seq {event.seq}")
        if msg.event not in (event.type, "message"):
            raise CheckFailed(f"SSE event {msg.event!r} differs from envelope type {event.type}")
        if seqs and event.seq <= seqs[-1]:
            raise CheckFailed(f"seq {event.seq} after {seqs[-1]}: not strictly increasing")
        seqs.append(event.seq)
    return seqs


async def sse_checks(probe: Probe, report: ConformanceReport, run_id: str, terminal: bool) -> None:
    path = f"/v1/runs/{run_id}/events"
    seen: list[int] = []
    last_type: list[str] = []

    async def framing() -> str:
        answer, messages, retry_ms = await read_sse(probe, path, limit=10_000 if terminal else 20)
        expect_status(answer, 200)
        if answer.content_type != "text/event-stream":
            raise CheckFailed(
                f"Content-Type {answer.content_type or 'none'}, not text/event-stream"
            )
        if retry_ms is None:
            raise CheckFailed("no `retry:` field before the events")
        if not messages:
            raise CheckFailed(f"no events within {SSE_READ_S:.0f} s")
        seen.extend(_check_messages(messages))
        last_type.append(parse_event(messages[-1].data).type)
        if terminal and last_type[-1] not in TERMINAL_EVENT_TYPES:
            raise CheckFailed(
                f"a finished run's stream ended on {last_type[-1]}, not its end event"
            )
        return f"{len(seen)} events, seq {seen[0]}..{seen[-1]}, retry {retry_ms} ms"

    async def resume() -> str:
        if len(seen) < 2:
            raise SkipCheck("fewer than two events to resume between")
        after = seen[len(seen) // 2 - 1]
        answer, messages, _ = await read_sse(probe, path, last_event_id=str(after), limit=3)
        expect_status(answer, 200)
        got = _check_messages(messages)
        expected = [s for s in seen if s > after][:3]
        if got[: len(expected)] != expected:
            raise CheckFailed(f"after Last-Event-ID {after} expected {expected}, got {got[:3]}")
        return f"Last-Event-ID {after} resumed at {got[0]}"

    async def terminal_204() -> str:
        if not terminal or not seen:
            raise SkipCheck("no finished run to check the end of the stream on")
        answer, _msgs, _retry = await read_sse(probe, path, last_event_id=str(seen[-1]), limit=1)
        if answer.status != 204:
            raise CheckFailed(f"Last-Event-ID at the end event answered {answer.status}, not 204")
        return "204 No Content after the end event"

    if await run_check(report, "sse.framing", framing):
        await run_check(report, "sse.resume", resume)
        await run_check(report, "sse.terminal_204", terminal_204)
