"""`ItoApi`: the part of `ItoClient` the TUI and the alert watcher use, as a Protocol.

The UI is typed against this, not against `ItoClient`, so a test's fake client
(`tests/support/fakes.py`) is checked by mypy against the same list: a method the UI
starts to call, or a signature that changes, fails `mypy` in the fakes too, instead of
in a snapshot that quietly shows a screen no backend would produce.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ito_tui.contract import (
        Booking,
        Capabilities,
        Estimate,
        EventBase,
        Fleet,
        LogLine,
        LogPage,
        LogTruncated,
        Proposal,
        Run,
        RunSummary,
        TelemetryPage,
        TrainingSpec,
        WhoAmI,
    )

    from .api import ItoClient
    from .connection import ConnectionState
    from .logstream import LogStream
    from .stream import EventStream

__all__ = ["EventFeed", "ItoApi", "LogFeed"]


class EventFeed(Protocol):
    """A run's event stream as its readers use it (`ItoClient.events` gives an `EventStream`)."""

    @property
    def state(self) -> ConnectionState:
        """Where the stream is: live, reconnecting (and when), ended; the last seq read."""

    def __aiter__(self) -> EventFeed: ...

    async def __anext__(self) -> EventBase: ...

    async def aclose(self) -> None: ...


class LogFeed(Protocol):
    """A run's job log as its readers use it (`ItoClient.logs` gives a `LogStream`).

    Awaiting it checks the `runs.logs` capability (CapabilityMissing); iterating yields
    `LogLine`s and `LogTruncated` gaps until the run's log is over (StopAsyncIteration).
    """

    @property
    def state(self) -> ConnectionState:
        """Where the stream is: live, reconnecting (and when), closed; the last seq read."""

    @property
    def last_seq(self) -> int | None:
        """The last seq yielded (or the `since_seq` given), None before any."""

    def __await__(self) -> Generator[Any, None, LogFeed]: ...

    def __aiter__(self) -> LogFeed: ...

    async def __anext__(self) -> LogLine | LogTruncated: ...

    async def aclose(self) -> None: ...


class ItoApi(Protocol):
    """The calls the UI makes of one backend (`ItoClient`'s signatures, API.md's endpoints)."""

    async def capabilities(self, refresh: bool = False) -> Capabilities: ...

    async def whoami(self) -> WhoAmI: ...

    async def bookings(
        self, status: str | None = None, all_pages: bool = True
    ) -> list[Booking]: ...

    async def booking(self, booking_id: str) -> Booking: ...

    async def runs(
        self, state: str | None = None, booking_id: str | None = None
    ) -> list[RunSummary]: ...

    async def run(self, run_id: str) -> Run: ...

    async def telemetry(
        self,
        run_id: str,
        since_seq: int | None = None,
        max_points: int | None = None,
        metrics: Sequence[str] = (),
        from_step: int | None = None,
        to_step: int | None = None,
    ) -> TelemetryPage: ...

    async def log_page(
        self,
        run_id: str,
        *,
        before_seq: int | None = None,
        limit: int = 500,
        ranks: Sequence[int] = (),
        level: str | None = None,
        sources: Sequence[str] = (),
        q: str | None = None,
    ) -> LogPage: ...

    async def fleet(self, run_id: str) -> Fleet: ...

    async def proposals(self, run_id: str, status: str | None = None) -> list[Proposal]: ...

    async def all_proposals(
        self,
        *,
        status: str | None = None,
        run_id: str | None = None,
        decided_by: str | None = None,
        since: datetime | None = None,
        all_pages: bool = True,
    ) -> list[Proposal]: ...

    async def estimate(self, spec: TrainingSpec) -> Estimate: ...

    async def create_run(self, spec: TrainingSpec, idempotency_key: str | None = None) -> Run: ...

    async def approve(
        self, proposal_id: str, comment: str | None = None, idempotency_key: str | None = None
    ) -> Proposal: ...

    async def reject(
        self, proposal_id: str, comment: str | None = None, idempotency_key: str | None = None
    ) -> Proposal: ...

    async def cancel_run(
        self, run_id: str, reason: str | None = None, idempotency_key: str | None = None
    ) -> Run: ...

    def events(
        self,
        run_id: str,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> EventFeed: ...

    def logs(
        self,
        run_id: str,
        *,
        tail: int | None = 200,
        since_seq: int | None = None,
        ranks: Sequence[int] = (),
        level: str | None = None,
        sources: Sequence[str] = (),
        q: str | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> LogFeed: ...

    async def aclose(self) -> None: ...


if TYPE_CHECKING:
    # Checked by mypy only (never run): the real client and its stream satisfy the Protocols,
    # so a signature that drifts in `ItoClient` fails here and in every fake.
    _client: type[ItoApi] = ItoClient
    _stream: type[EventFeed] = EventStream
    _logs: type[LogFeed] = LogStream
