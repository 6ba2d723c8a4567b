"""`FakeClient`: the whole `ItoApi` over fixed data, for tests that need no server.

One fake for every screen: bookings (the picker and the form, estimates from desk_sim's
planner), runs (a snapshot, a scripted event stream, a telemetry page), proposals (a
run's, and the decision trail filtered as desk_sim filters it), decisions, the job log
(`log_lines`, streamed and paged with the filters asked: `fakelogs`) and the fleet. It
records what "the backend" was asked (`created`, `estimates`, `decisions`, `cancels`,
`trail_reads`, `telemetry_reads`, `log_reads`, `fleet_reads`) so tests assert on that,
not on pixels.

mypy checks it against `ito_tui.client.protocol.ItoApi` (the assignment at the end): a
call the UI starts to make, or a signature that changes, fails `mypy` here.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ito_tui.client import AuthError, ConnectionState, NotFound
from ito_tui.client.errors import Conflict
from ito_tui.client.loglines import LogQuery
from ito_tui.contract import (
    Booking,
    Capabilities,
    Estimate,
    EventBase,
    Fleet,
    LogLine,
    LogPage,
    Problem,
    Proposal,
    Run,
    RunSummary,
    TelemetryPage,
    TelemetrySample,
    TrainingSpec,
    WhoAmI,
)
from ito_tui.desk_sim.planner import plan_and_estimate

from .caps import MAX_BUDGET_USD, capabilities
from .fakelogs import FakeLogStream, page_of, require

if TYPE_CHECKING:
    from ito_tui.client.protocol import EventFeed, ItoApi, LogFeed

__all__ = ["FakeClient", "FakeStream"]

FROZEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
"""The default frozen "now" of a fake backend (a data set may bring its own)."""


class FakeStream:
    """Yields the scripted events after `since`, then waits as a quiet live stream does.

    The first event turns the state `live` (reported through `on_state`, as the real
    stream does); `final`, when given, is reported once the script has run out (e.g.
    `reconnecting in 4 s`).
    """

    def __init__(
        self,
        events: list[EventBase],
        since: int,
        on_state: Callable[[ConnectionState], None] | None,
        final: ConnectionState | None,
    ) -> None:
        self._events = [e for e in events if e.seq > since]
        self._on_state = on_state
        self._final = final
        self.state = ConnectionState(last_seq=since)

    def __aiter__(self) -> FakeStream:
        return self

    async def __anext__(self) -> EventBase:
        if self._events:
            event = self._events.pop(0)
            self.state = replace(self.state, status="live", last_seq=event.seq)
            if self._on_state is not None:
                self._on_state(self.state)
            return event
        if self._final is not None and self._on_state is not None:
            self.state, self._final = self._final, None
            self._on_state(self.state)
        await asyncio.Event().wait()  # a quiet live stream: nothing more, until closed
        raise StopAsyncIteration

    async def aclose(self) -> None:
        return None


@dataclass(kw_only=True)
class FakeClient:
    """The `ItoApi` over fixed data (see the module docstring). Every field is optional."""

    caps: Capabilities = field(default_factory=capabilities)
    operator: str | None = "alice"
    """Who the token belongs to; None: whoami answers 401 (the login modal comes up)."""
    fail_with: BaseException | None = None
    """Raised by every read while set (an unreachable backend); tests clear it to recover."""
    now: datetime = FROZEN
    """The backend's clock: creation and decision times, estimates."""
    max_budget_usd: Decimal = MAX_BUDGET_USD
    booking_list: list[Booking] = field(default_factory=list)
    run_model: Run | None = None
    """The one run `run(run_id)` answers (any other id is not found)."""
    script: list[EventBase] = field(default_factory=list)
    """The run's events, streamed after the `since_seq` asked for."""
    final_state: ConnectionState | None = None
    pending: list[Proposal] = field(default_factory=list)
    """What `proposals(run_id)` lists."""
    summaries: list[RunSummary] = field(default_factory=list)
    trail: list[Proposal] = field(default_factory=list)
    """The decision trail `all_proposals` filters, newest first."""
    trail_error: BaseException | None = None
    samples: dict[str, list[TelemetrySample]] = field(default_factory=dict)
    """Telemetry by run id; a run without any gets the script's telemetry events."""
    conflict_with: Proposal | None = None
    """When set, a decision is answered 409 with this as the proposal's current state."""
    decide_failures: list[BaseException] = field(default_factory=list)
    """Errors the next decisions raise, one each, first first (each is still recorded in
    `decisions`, as the backend would have seen the request)."""
    log_lines: list[LogLine] = field(default_factory=list)
    """The run's job log, oldest first (any run id asked for gets it)."""
    log_ended: bool = False
    """True: a log stream ends after its lines (the run is over); False: it stays live."""
    fleet_model: Fleet | None = None
    """What `fleet(run_id)` answers for the run of `run_model` (any other: not found)."""

    created: list[tuple[TrainingSpec, str | None]] = field(default_factory=list)
    estimates: list[TrainingSpec] = field(default_factory=list)
    decisions: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    cancels: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    trail_reads: list[dict[str, Any]] = field(default_factory=list)
    telemetry_reads: list[str] = field(default_factory=list)
    metric_reads: list[tuple[str, ...]] = field(default_factory=list)
    step_reads: list[tuple[int | None, int | None]] = field(default_factory=list)
    """Each `telemetry` call's (from_step, to_step)."""
    log_reads: list[dict[str, Any]] = field(default_factory=list)
    """Each `logs` / `log_page` call: its `kind` ("stream" / "page") and arguments."""
    fleet_reads: list[str] = field(default_factory=list)

    def _check(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with

    # ------------------------------------------------------------ the connection

    async def capabilities(self, refresh: bool = False) -> Capabilities:
        self._check()
        return self.caps

    async def whoami(self) -> WhoAmI:
        self._check()
        if self.operator is None:
            raise AuthError("Not authenticated: missing or invalid token", status=401)
        return WhoAmI(operator=self.operator)

    async def aclose(self) -> None:
        return None

    # ------------------------------------------------------------ bookings

    async def bookings(self, status: str | None = None, all_pages: bool = True) -> list[Booking]:
        self._check()
        return [b for b in self.booking_list if status is None or str(b.status) == status]

    async def booking(self, booking_id: str) -> Booking:
        self._check()
        for b in self.booking_list:
            if b.booking_id == booking_id:
                return b
        raise NotFound(f"Booking not found: {booking_id}", status=404)

    async def estimate(self, spec: TrainingSpec) -> Estimate:
        self._check()
        self.estimates.append(spec)
        booking = await self.booking(spec.booking_id)
        return plan_and_estimate(spec, booking, max_budget_usd=self.max_budget_usd, now=self.now)

    async def create_run(self, spec: TrainingSpec, idempotency_key: str | None = None) -> Run:
        self.created.append((spec, idempotency_key))
        estimate = await self.estimate(spec)
        body: dict[str, Any] = {
            "run_id": f"run_{uuid.UUID(int=len(self.created)).hex[:8]}",
            "booking_id": spec.booking_id,
            "spec": spec.model_dump(mode="json"),
            "state": "queued",
            "plan": estimate.plan.model_dump(mode="json") if estimate.plan else None,
            "spend": {"usd_spent": "0", "usd_committed": "0", "budget_usd": str(spec.budget_usd)},
            "created_at": self.now.isoformat(),
            "updated_at": self.now.isoformat(),
        }
        return Run.model_validate(body)

    # ------------------------------------------------------------ runs

    async def runs(
        self, state: str | None = None, booking_id: str | None = None
    ) -> list[RunSummary]:
        self._check()
        return [
            r
            for r in self.summaries
            if (state is None or str(r.state) == state)
            and (booking_id is None or r.booking_id == booking_id)
        ]

    async def run(self, run_id: str) -> Run:
        self._check()
        if self.run_model is not None and self.run_model.run_id == run_id:
            return self.run_model
        listed = next((r for r in self.summaries if r.run_id == run_id), None)
        if self.run_model is None or listed is None:
            raise NotFound(f"Run not found: {run_id}", status=404)
        # Another run of the runs list: as listed, with the main run's spec and plan, and
        # no events (`events` streams none for it).
        return self.run_model.model_copy(
            update={
                "run_id": run_id,
                "state": listed.state,
                "current_stage": listed.current_stage,
                "spend": listed.spend,
                "pending_proposal_ids": listed.pending_proposal_ids,
                "failure": listed.failure,
                "last_event_seq": 0,
                "updated_at": listed.updated_at,
            }
        )

    async def telemetry(
        self,
        run_id: str,
        since_seq: int | None = None,
        max_points: int | None = None,
        metrics: Sequence[str] = (),
        from_step: int | None = None,
        to_step: int | None = None,
    ) -> TelemetryPage:
        self._check()
        self.telemetry_reads.append(run_id)
        self.metric_reads.append(tuple(metrics))
        self.step_reads.append((from_step, to_step))
        if run_id in self.samples:
            items = self.samples[run_id]
        else:
            # The samples the run's snapshot has already seen, as GET /telemetry gives them.
            upto = self.run_model.last_event_seq if self.run_model is not None else 0
            items = [
                TelemetrySample.model_validate(getattr(e, "data").model_dump())  # noqa: B009
                for e in self.script
                if e.type == "telemetry" and e.seq <= upto
            ]
        lo = -1 if from_step is None else from_step
        hi = 2**63 if to_step is None else to_step
        return TelemetryPage(
            items=[
                s for s in items if (since_seq is None or s.seq > since_seq) and lo <= s.step <= hi
            ]
        )

    def events(
        self,
        run_id: str,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> FakeStream:
        own = self.run_model is None or self.run_model.run_id == run_id
        return FakeStream(self.script if own else [], since_seq or 0, on_state, self.final_state)

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
    ) -> FakeLogStream:
        query = LogQuery.of(ranks, level, sources, q)
        self.log_reads.append(
            {
                "kind": "stream",
                "run_id": run_id,
                "tail": tail,
                "since_seq": since_seq,
                "query": query,
            }
        )
        return FakeLogStream(
            self.caps,
            self.log_lines,
            query,
            tail=tail,
            since_seq=since_seq,
            ended=self.log_ended,
            on_state=on_state,
        )

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
    ) -> LogPage:
        self._check()
        require(self.caps, "runs.logs")
        query = LogQuery.of(ranks, level, sources, q)
        self.log_reads.append(
            {
                "kind": "page",
                "run_id": run_id,
                "before_seq": before_seq,
                "limit": limit,
                "query": query,
            }
        )
        return page_of(self.log_lines, query, before_seq, limit)

    async def fleet(self, run_id: str) -> Fleet:
        self._check()
        require(self.caps, "runs.fleet")
        self.fleet_reads.append(run_id)
        if self.fleet_model is None or self.run_model is None or self.run_model.run_id != run_id:
            raise NotFound(f"Run not found: {run_id}", status=404)
        return self.fleet_model

    async def cancel_run(
        self, run_id: str, reason: str | None = None, idempotency_key: str | None = None
    ) -> Run:
        self.cancels.append((run_id, reason, idempotency_key))
        run = await self.run(run_id)
        return run.model_copy(update={"state": "cancelling"})

    # ------------------------------------------------------------ proposals

    async def proposals(self, run_id: str, status: str | None = None) -> list[Proposal]:
        self._check()
        return [
            p
            for p in self.pending
            if p.run_id == run_id and (status is None or str(p.status) == status)
        ]

    async def all_proposals(
        self,
        *,
        status: str | None = None,
        run_id: str | None = None,
        decided_by: str | None = None,
        since: datetime | None = None,
        all_pages: bool = True,
    ) -> list[Proposal]:
        self._check()
        self.trail_reads.append({"status": status, "since": since})
        if self.trail_error is not None:
            raise self.trail_error
        return [
            p
            for p in self.trail
            if (status is None or str(p.status) == status)
            and (run_id is None or p.run_id == run_id)
            and (decided_by is None or p.decided_by == decided_by)
            and (since is None or p.created_at >= since)
        ]

    async def approve(
        self, proposal_id: str, comment: str | None = None, idempotency_key: str | None = None
    ) -> Proposal:
        return self._decide("approve", proposal_id, comment, idempotency_key)

    async def reject(
        self, proposal_id: str, comment: str | None = None, idempotency_key: str | None = None
    ) -> Proposal:
        return self._decide("reject", proposal_id, comment, idempotency_key)

    def _decide(self, verb: str, pid: str, comment: str | None, key: str | None) -> Proposal:
        self.decisions.append((verb, pid, comment, key))
        if self.decide_failures:
            raise self.decide_failures.pop(0)
        if self.conflict_with is not None:
            problem = Problem(title="Already decided", status=409, code="proposal.already_decided")
            raise Conflict(
                "Already decided", current=self.conflict_with, problem=problem, status=409
            )
        asked = self._proposal(pid)
        return asked.model_copy(
            update={
                "status": "approved" if verb == "approve" else "rejected",
                "decided_by": self.operator,
                "decided_at": self.now,
                "comment": comment,
            }
        )

    def _proposal(self, pid: str) -> Proposal:
        """The proposal `pid` as this backend knows it: listed, or created by the script."""
        created = [getattr(getattr(e, "data", None), "proposal", None) for e in self.script]
        for p in [*self.pending, *self.trail, *created]:
            if isinstance(p, Proposal) and p.proposal_id == pid:
                return p
        raise NotFound(f"Proposal not found: {pid}", status=404)


if TYPE_CHECKING:
    # Checked by mypy only: the fake is the API the UI uses, and its stream a feed.
    _client: type[ItoApi] = FakeClient
    _stream: type[EventFeed] = FakeStream
    _logs: type[LogFeed] = FakeLogStream
