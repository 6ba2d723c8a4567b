"""Following one run for its screen: snapshot, telemetry backfill, then the event stream.

`RunFollower.run` is the body of the run screen's stream worker. Every piece of data
goes into the screen's `state.RunTracker` (the one owner of the run's data), and each
step tells the screen what changed (`Changes`) through `FollowSink`; the follower
draws nothing and the screen reads nothing from the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ito_tui.client.errors import (
    AuthError,
    BackendUnavailable,
    ItoError,
    TransportPolicyError,
)

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState
    from ito_tui.client.protocol import ItoApi
    from ito_tui.contract import EventBase, Proposal, Run
    from ito_tui.state import RunTracker
    from ito_tui.state.changes import Changes

__all__ = [
    "BACKFILL_POINTS",
    "HISTORY_EVENTS",
    "FollowSink",
    "RunFollower",
    "closed_label",
    "connection_label",
]

BACKFILL_POINTS = 2000
"""Telemetry points fetched on open and after a resync (the series bucket them anyway)."""
HISTORY_EVENTS = 5000
"""Events before the snapshot replayed on open, for the event log's history (at most half
the server's retention, which would otherwise answer with a resync)."""


class FollowSink(Protocol):
    """What the follower tells the screen it follows for (the run screen)."""

    def seeded(self, run: Run, changes: Changes) -> None:
        """The snapshot is in the tracker."""

    def proposals_fetched(self, proposals: list[Proposal]) -> None:
        """The pending proposals a snapshot names by id only, fetched."""

    def applied(self, event: EventBase, changes: Changes) -> None:
        """One event went through `tracker.feed` (history and duplicates too)."""

    def backfilled(self, changes: Changes) -> None:
        """A telemetry page went into a fresh bank (`tracker.backfill`)."""

    def backfill_failed(self, error: ItoError) -> None:
        """A telemetry page could not be had: the charts lose their history only."""

    def connection_changed(self, label: str) -> None:
        """The stream's connection, in words for the header."""


def connection_label(state: ConnectionState) -> str:
    """`live`, `reconnecting in 4 s · 3 reconnects`, `live (resynced)`: one label, replaced,
    so a flapping stream shows its count, never a line per reconnect."""
    status = state.status
    if status == "reconnecting" and state.retry_in_s is not None:
        count = f" · {state.reconnects} reconnects" if state.reconnects > 1 else ""
        return f"reconnecting in {state.retry_in_s:.0f} s{count}"
    if status == "resynced":
        return "live (resynced)"
    return str(status)


def closed_label(outcome: str | None) -> str:
    """The header's word once the stream ended with the run (`closed · run gate failed`)."""
    return f"closed · run {outcome.replace('_', ' ')}" if outcome else "closed"


class RunFollower:
    """Snapshot, backfill, then the stream until the run's end, into one `RunTracker`."""

    def __init__(
        self,
        client: ItoApi,
        tracker: RunTracker,
        sink: FollowSink,
        *,
        event_retention: int | None = None,
    ) -> None:
        self.client = client
        self.tracker = tracker
        self.sink = sink
        self.event_retention = event_retention
        """The server's event retention (capabilities), which bounds the history replayed."""

    def history_from(self, run: Run) -> int:
        """The seq to replay the stream from: the log shows the events before the snapshot."""
        history = HISTORY_EVENTS
        if self.event_retention is not None:
            history = min(history, self.event_retention // 2)
        return max(0, run.last_event_seq - history)

    async def run(self) -> None:
        """Follow the run until its terminal event (or a snapshot saying it ended)."""
        client, tracker, sink = self.client, self.tracker, self.sink
        run = await client.run(tracker.run_id)
        sink.seeded(run, tracker.seed(run))
        if run.pending_proposal_ids:
            # A snapshot names pending proposals by id only; fetch them to show them.
            sink.proposals_fetched(await client.proposals(tracker.run_id, status="pending"))
        await self.backfill()
        # From before the snapshot: the events up to it fill the log (`RunTracker.feed`).
        stream = client.events(
            tracker.run_id,
            since_seq=self.history_from(run),
            on_state=lambda state: sink.connection_changed(connection_label(state)),
        )
        try:
            async for event in stream:
                # A resync at or below what was shown re-bases inside `feed`.
                sink.applied(event, tracker.feed(event))
                if event.type == "resync":
                    # The history may have gaps or overlaps with the bank's: a fresh one.
                    await self.backfill()
        finally:
            await stream.aclose()
        sink.connection_changed(closed_label(tracker.state.outcome))

    async def backfill(self) -> None:
        """A fresh telemetry bank from one `GET /telemetry` page."""
        try:
            page = await self.client.telemetry(self.tracker.run_id, max_points=BACKFILL_POINTS)
        except (AuthError, BackendUnavailable, TransportPolicyError):
            raise  # the session's problem, not the endpoint's: the app's error sink decides
        except ItoError as exc:
            # A malformed or refused telemetry page costs the charts their history, not the
            # live view: report it (endpoint and field or problem) and keep following.
            self.sink.backfill_failed(exc)
            return
        self.sink.backfilled(self.tracker.backfill(page.items, fresh=True))
