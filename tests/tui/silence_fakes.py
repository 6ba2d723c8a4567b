"""A run that goes silent for the run screen's tests: run_7f3a9c trains in pretrain, then
its stream carries only a checkpoint two hours (of the backend's clock) after the last
progress — connected, no progress. (Sent once the app's watcher is up: its clock starts
with the first event it sees.) `QueueClient` lets a test send more events later
(progress resuming), as a live stream would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from textual.pilot import Pilot

from ito_tui.client import ConnectionState
from ito_tui.contract import EventBase, make_event
from tests.support.fakes import FakeStream
from tests.support.waiting import wait_for

from .pipeline_fakes import RUN_ID, FakeRunClient, Script, loss_at, pretrain_script, sample

__all__ = ["QueueClient", "go_silent", "resumed", "silent_script"]

SILENT_FOR = timedelta(hours=2)


def silent_script() -> tuple[Script, int]:
    """Pretrain to step 200; then (from the returned index on, for the test to send once
    the app's watcher is up) a sample at step 210 and a checkpoint 2 h later, nothing else."""
    s = pretrain_script(up_to_step=200)
    split = len(s.events)
    seq = split + 1
    s.add("telemetry", sample(seq, 210, s.t + timedelta(seconds=30), loss_at(210)), dt=30)
    s.add(
        "checkpoint.saved",
        {
            "checkpoint": {
                "checkpoint_id": "ckpt_00210",
                "stage": "pretrain",
                "step": 210,
                "created_at": (s.t + SILENT_FOR).isoformat(),
                "size_gb": 96.0,
                "blocking_s": 4.8,
                "persist_s": 31.0,
            },
            "write_gb_per_s": 3.1,
        },
        dt=SILENT_FOR.total_seconds(),
    )
    return s, split


def resumed(script: Script) -> EventBase:
    """The telemetry sample that ends the silence (step 220, a minute later)."""
    seq = len(script.events) + 1
    t = script.t + timedelta(minutes=1)
    return make_event(
        "telemetry",
        seq=seq,
        run_id=RUN_ID,
        ts=t.isoformat(),
        data=sample(seq, 220, t, loss_at(220)),
        stage="pretrain",
    )


async def go_silent(pilot: Pilot[Any], client: QueueClient, script: Script, split: int) -> None:
    """Once the app's watcher is up, send the events after `split` (the silence starts)."""
    app = pilot.app
    await wait_for(pilot, lambda: getattr(app, "alerting").watcher is not None)  # noqa: B009
    for event in script.events[split:]:
        await client.more.put(event)


class QueueStream(FakeStream):
    """The scripted events, then whatever the test puts in `more`."""

    def __init__(
        self,
        events: list[EventBase],
        since: int,
        on_state: Callable[[ConnectionState], None] | None,
        more: asyncio.Queue[EventBase],
    ) -> None:
        super().__init__(events, since, on_state, None)
        self._scripted = [e for e in events if e.seq > since]
        self._more = more

    async def __anext__(self) -> EventBase:
        event = self._scripted.pop(0) if self._scripted else await self._more.get()
        self.state = ConnectionState(status="live", last_seq=event.seq)
        if self._on_state is not None:
            self._on_state(self.state)
        return event


@dataclass(kw_only=True)
class QueueClient(FakeRunClient):
    """`FakeRunClient` whose stream takes further events from `more`."""

    more: asyncio.Queue[EventBase] = field(default_factory=asyncio.Queue)

    def events(
        self,
        run_id: str,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> FakeStream:
        return QueueStream(self.script, since_seq or 0, on_state, self.more)
