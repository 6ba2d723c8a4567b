"""A backend restored from an older backup in the middle of a run (desk_sim cannot rewind).

`RestoredRun` serves one run on the hostile loopback server (`client.fakeserver`):
the first event stream sends seqs 1..`before` and closes, as a backend does when
it is stopped; from then on the backend is the restored one, whose history ends
at `restored_to` (< `before`). Its snapshot says so, and its stream numbers the
events it goes on to produce from there: `restored_to + 1` .. `end`, the last one
terminal (`final`). A `Last-Event-ID` at or past `end` gets 204. Every events
request is recorded with its `Last-Event-ID` in `last_event_ids`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ito_tui.contract import event_to_json, make_event
from tests.client import samples
from tests.client.fakeserver import Conn, FakeServer, Received

SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
TS = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
FINAL_EVENTS = {"completed": "run.completed", "failed": "run.failed"}


@dataclass
class RestoredRun:
    server: FakeServer
    run_id: str = "run_restored"
    before: int = 20
    restored_to: int = 12
    end: int = 19
    final: str = "completed"
    ended_on_restore: bool = False
    """The restored backend's run had already ended at `end` (its snapshot says so)."""
    restored: bool = False
    last_event_ids: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server.routes[("GET", f"/v1/runs/{self.run_id}")] = self.snapshot
        self.server.routes[("GET", f"/v1/runs/{self.run_id}/events")] = self.events

    def message(self, seq: int, terminal: bool = False) -> bytes:
        if terminal:
            failure = {"kind": "fatal", "detail": "the restored run failed"}
            event = make_event(
                FINAL_EVENTS[self.final],
                seq=seq,
                run_id=self.run_id,
                ts=TS,
                data={"detail": "done"} if self.final == "completed" else {"failure": failure},
            )
        else:
            event = make_event(
                "run.state_changed",
                seq=seq,
                run_id=self.run_id,
                ts=TS,
                data={"to_state": "running"},
            )
        return f"id: {seq}\nevent: {event.type}\ndata: {event_to_json(event)}\n\n".encode()

    async def snapshot(self, req: Received, conn: Conn) -> None:
        body: dict[str, Any]
        if not self.restored:
            body = samples.run(self.run_id, 0, "running")
        elif self.ended_on_restore:
            body = samples.run(self.run_id, self.end, self.final)
        else:
            body = samples.run(self.run_id, self.restored_to, "running")
        await conn.json(200, body)

    async def events(self, req: Received, conn: Conn) -> None:
        lei = req.headers.get("last-event-id")
        self.last_event_ids.append(lei)
        after = int(lei) if lei else 0
        if not self.restored:
            await conn.head(200, SSE_HEADERS)
            await conn.write(b"retry: 100\n\n")
            for seq in range(after + 1, self.before + 1):
                await conn.write(self.message(seq))
            await conn.end()
            self.restored = True  # the backend stops here; what answers next is the backup
            return
        if after >= self.end or self.ended_on_restore:
            await conn.send(204, content_type=None)
            return
        await conn.head(200, SSE_HEADERS)
        for seq in range(after + 1, self.end + 1):
            await conn.write(self.message(seq, terminal=seq == self.end))
        await conn.end()
