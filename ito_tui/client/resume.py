"""What a run's snapshot says about an event stream that ended without its terminal event.

`EventStream` re-reads `GET /v1/runs/{id}` when the server answers 204 or a live
stream ends before the run's terminal event, and `judge` turns the snapshot into
one of four verdicts:

- `running`: the run goes on and the stream has seen everything the snapshot
  has (a 204 while running, a load balancer cutting the stream): reconnect;
- `tail`: the run ended after events the stream has not had yet: reconnect once
  more to replay them (the terminal event included);
- `ended`: the run ended and no reconnect brings anything more (the server said
  204, or the last reconnect brought no event): the run's outcome is the
  snapshot, yielded as a `resync`;
- `rewound`: the snapshot's `last_event_seq` is below the last seq the stream
  yielded: the backend's history went backwards (restored from a backup). The
  snapshot is yielded as a `resync` with the backend's (lower) seq, and from
  then on the backend's numbering is the one followed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from ito_tui.contract import EVENT_CLASSES, EventBase, Run, now_utc

from .errors import BackendUnavailable, ItoError, RateLimited

__all__ = ["Resumer", "Verdict", "judge", "resync_of"]

Kind = Literal["running", "tail", "ended", "rewound"]


@dataclass(frozen=True)
class Verdict:
    """What to do after a re-read snapshot: `kind`, a line for people, the event to yield."""

    kind: Kind
    message: str
    event: EventBase | None = None
    finished: bool = False
    """True when the stream is over (its last event is `event`)."""


def resync_of(run: Run) -> EventBase:
    """A `resync` event carrying `run`, numbered by its `last_event_seq`."""
    return EVENT_CLASSES["resync"].model_validate(
        {
            "seq": run.last_event_seq,
            "run_id": run.run_id,
            "type": "resync",
            "ts": now_utc(),
            "stage": None if run.current_stage is None else str(run.current_stage),
            "data": run,
        }
    )


def judge(
    run: Run, *, last_seq: int, server_done: bool, tail_tried: bool, fresh: bool = False
) -> Verdict:
    """The verdict on `run` (already checked to be the run asked about).

    `last_seq` is the last seq the stream yielded; `server_done` whether the
    server said so (204); `tail_tried` whether a reconnect for the tail, made at
    this same `last_seq`, brought nothing; `fresh` whether `last_seq` is the
    consumer's own starting point (nothing yielded yet).
    """
    head = run.last_event_seq
    state = str(run.state)
    if fresh and run.terminal and head == last_seq:
        # Resumed at the run's end (API.md: 204): the consumer has it all already.
        return Verdict("ended", f"the run is {state}; nothing after seq {head}", finished=True)
    if head < last_seq:
        return Verdict(
            "rewound",
            f"backend's event history went backwards from seq {last_seq} to {head} "
            "(restored from a backup?)",
            resync_of(run),
            finished=run.terminal,
        )
    if run.terminal and (server_done or tail_tried or head == last_seq):
        return Verdict(
            "ended",
            f"the event stream ended before the run's last event (seq {last_seq} of {head}); "
            f"the run is {state} per its snapshot",
            resync_of(run),
            finished=True,
        )
    if run.terminal:
        return Verdict("tail", f"the run is {state}; fetching its events after seq {last_seq}")
    why = "the server answered 204" if server_done else "the stream ended"
    return Verdict("running", f"{why} while the run is still {state}; reconnecting")


class Resumer:
    """When a stream's snapshot must be re-read, and the verdict once it was.

    `due` is why a re-read is owed ("204", "closed") until one succeeds;
    `read` fetches the run (a callable, so this module does no I/O of its own).
    """

    def __init__(self, read: Callable[[], Awaitable[Run]]) -> None:
        self.read = read
        self.due: Literal["204", "closed"] | None = None
        self.possible = True
        """False when the backend offers no `runs.read`: nothing to re-read."""
        self._tail_at: int | None = None

    async def verdict(
        self, last_seq: int, *, fresh: bool
    ) -> tuple[Verdict | None, ItoError | None]:
        """The verdict on the re-read snapshot, or the transient problem that kept it
        from being read (the re-read stays due)."""
        server_done = self.due == "204"
        if not self.possible:
            # A 204 ends the stream, its outcome unknown; any other end: just reconnect.
            self.due = None
            why = "the server ended the event stream (HTTP 204); the backend offers no runs.read"
            return (Verdict("ended", why, finished=True) if server_done else None), None
        try:
            run = await self.read()
        except (BackendUnavailable, RateLimited) as exc:
            return None, exc
        self.due = None
        verdict = judge(
            run,
            last_seq=last_seq,
            server_done=server_done,
            tail_tried=self._tail_at == last_seq,
            fresh=fresh,
        )
        self._tail_at = last_seq if verdict.kind == "tail" else None
        return verdict, None
