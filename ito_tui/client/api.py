"""`ItoClient`: typed async methods for every endpoint of the Itô training API (API.md).

Use one client per backend for the program's lifetime:

    async with ItoClient(url, token=SecretStr("...")) as client:
        caps = await client.capabilities()
        run = await client.create_run(spec)
        async for event in client.events(run.run_id):
            ...

Methods return contract models or raise `ito_tui.client.errors` types. A
method whose endpoint needs a capability calls `require` first, so a backend
that lists the capability as missing is never asked (and a 501 is final).
Every answer is checked against its question (`answers`): the run, booking or
proposal asked about, the filters of a listing, a decision's outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ito_tui.contract import (
    Booking,
    CancelRequest,
    Checkpoint,
    Decision,
    Estimate,
    Fleet,
    InjectRequest,
    LogPage,
    Proposal,
    Run,
    RunSummary,
    TrainingSpec,
    WhoAmI,
)

from . import adapters
from .answers import (
    check_conflict,
    check_decision,
    check_items,
    check_newest_first,
    check_same,
    rfc3339,
)
from .base import DEFAULT_USER_AGENT, new_key
from .diagnose import check_fleet, check_log_page, log_query
from .errors import Conflict, ValidationFailed
from .pages import MAX_PAGES
from .telemetry import TelemetryReads, seg

if TYPE_CHECKING:
    from .logstream import LogStream
    from .stream import ConnectionState, EventStream

__all__ = ["DEFAULT_USER_AGENT", "MAX_PAGES", "ItoClient"]


class ItoClient(TelemetryReads):
    """Async client of one Itô backend (see module docstring).

    Raises `TransportPolicyError` here, before any connection, when the URL
    breaks the transport policy (plain http to a non-loopback host without
    `insecure_http`, credentials in the URL, a CA bundle that does not load).
    The keyword-only `retry` and `stream` knobs exist for tests and tuning.
    """

    # ------------------------------------------------------------ reads

    async def whoami(self) -> WhoAmI:
        """`GET /v1/whoami`: the operator the token maps to (AuthError if none)."""
        result: WhoAmI = await self._get(adapters.WHOAMI(), "/v1/whoami", "GET /v1/whoami", None)
        return result

    async def bookings(self, status: str | None = None, all_pages: bool = True) -> list[Booking]:
        """`GET /v1/bookings?status=`, following `next_cursor` unless `all_pages=False`."""
        endpoint = "GET /v1/bookings"
        filters = {"status": status}
        items = await self._all_pages(
            adapters.BOOKING_PAGE(), "/v1/bookings", endpoint, "bookings.read", filters, all_pages
        )
        check_items(endpoint, items, status=status)
        return items

    async def booking(self, booking_id: str) -> Booking:
        """`GET /v1/bookings/{id}`."""
        endpoint = "GET /v1/bookings/{id}"
        result: Booking = await self._get(
            adapters.BOOKING(), f"/v1/bookings/{_seg(booking_id)}", endpoint, "bookings.read"
        )
        check_same(endpoint, "booking_id", result.booking_id, booking_id, "booking")
        return result

    async def runs(
        self, state: str | None = None, booking_id: str | None = None
    ) -> list[RunSummary]:
        """`GET /v1/runs?state=&booking_id=`, all pages."""
        endpoint = "GET /v1/runs"
        filters = {"state": state, "booking_id": booking_id}
        items = await self._all_pages(
            adapters.RUN_PAGE(), "/v1/runs", endpoint, "runs.read", filters, True
        )
        check_items(endpoint, items, **filters)
        return items

    async def run(self, run_id: str) -> Run:
        """`GET /v1/runs/{id}`: the full snapshot, with `last_event_seq`."""
        endpoint = "GET /v1/runs/{id}"
        result: Run = await self._get(
            adapters.RUN(), f"/v1/runs/{_seg(run_id)}", endpoint, "runs.read"
        )
        check_same(endpoint, "run_id", result.run_id, run_id, "run")
        return result

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
        """`GET /v1/runs/{id}/logs/page?before_seq=&limit=&rank=&level=&source=&q=`: the
        `limit` newest lines before `before_seq` (the newest of all without it) that match,
        oldest first; `next_before_seq` asks for the page before it (None: nothing older).

        Checked: items oldest first (seq increasing), all before `before_seq`, no more than
        `limit`, each matching the filters, `next_before_seq` not after the first item.
        """
        endpoint = "GET /v1/runs/{id}/logs/page"
        query = log_query(endpoint, ranks, level, sources, q)
        params: dict[str, Any] = {"before_seq": before_seq, "limit": limit, **query.params()}
        result: LogPage = await self._get(
            adapters.LOG_PAGE(),
            f"/v1/runs/{_seg(run_id)}/logs/page",
            endpoint,
            "runs.logs",
            params,
        )
        check_log_page(endpoint, result, query, before_seq=before_seq, limit=limit)
        return result

    async def fleet(self, run_id: str) -> Fleet:
        """`GET /v1/runs/{id}/fleet`: quorum, replicas and nodes (hostnames, replica ids and
        each node's GPU indices checked unique: a view keys its rows by them)."""
        endpoint = "GET /v1/runs/{id}/fleet"
        result: Fleet = await self._get(
            adapters.FLEET(), f"/v1/runs/{_seg(run_id)}/fleet", endpoint, "runs.fleet"
        )
        check_fleet(endpoint, result)
        return result

    async def checkpoints(self, run_id: str) -> list[Checkpoint]:
        """`GET /v1/runs/{id}/checkpoints`."""
        result: list[Checkpoint] = await self._get(
            adapters.CHECKPOINTS(),
            f"/v1/runs/{_seg(run_id)}/checkpoints",
            "GET /v1/runs/{id}/checkpoints",
            "runs.read",
        )
        return result

    async def proposals(self, run_id: str, status: str | None = None) -> list[Proposal]:
        """`GET /v1/runs/{id}/proposals?status=`."""
        endpoint = "GET /v1/runs/{id}/proposals"
        result: list[Proposal] = await self._get(
            adapters.PROPOSALS(),
            f"/v1/runs/{_seg(run_id)}/proposals",
            endpoint,
            "proposals.read",
            {"status": status},
        )
        check_items(endpoint, result, run_id=run_id, status=status)
        return result

    async def all_proposals(
        self,
        *,
        status: str | None = None,
        run_id: str | None = None,
        decided_by: str | None = None,
        since: datetime | None = None,
        all_pages: bool = True,
    ) -> list[Proposal]:
        """`GET /v1/proposals?status=&run_id=&decided_by=&since=`: the decision trail across
        runs, newest first, following `next_cursor` unless `all_pages=False`.

        `since` must be timezone-aware (a naive time is refused here, before any request):
        proposals created at or after it.
        """
        endpoint = "GET /v1/proposals"
        filters: dict[str, Any] = {"status": status, "run_id": run_id, "decided_by": decided_by}
        if since is not None:
            if since.utcoffset() is None:
                raise ValidationFailed(
                    "since needs a timezone (e.g. UTC), not a naive time", endpoint=endpoint
                )
            filters["since"] = rfc3339(since)
        items: list[Proposal] = await self._all_pages(
            adapters.PROPOSAL_PAGE(),
            "/v1/proposals",
            endpoint,
            "proposals.read",
            filters,
            all_pages,
        )
        check_items(endpoint, items, status=status, run_id=run_id, decided_by=decided_by)
        check_newest_first(endpoint, items, since)
        return items

    # ------------------------------------------------------------ writes

    async def estimate(self, spec: TrainingSpec) -> Estimate:
        """`POST /v1/estimates` (no side effects, so it carries a fresh key and may retry)."""
        result: Estimate = await self._post(
            adapters.ESTIMATE(),
            "/v1/estimates",
            "POST /v1/estimates",
            "estimates.create",
            spec,
            new_key(),
        )
        return result

    async def create_run(self, spec: TrainingSpec, idempotency_key: str | None = None) -> Run:
        """`POST /v1/runs` with an Idempotency-Key (a new uuid4 when not given)."""
        endpoint = "POST /v1/runs"
        key = idempotency_key or new_key()
        result: Run = await self._post(
            adapters.RUN(), "/v1/runs", endpoint, "runs.create", spec, key
        )
        check_same(endpoint, "booking_id", result.booking_id, spec.booking_id, "booking")
        return result

    async def approve(
        self, proposal_id: str, comment: str | None = None, idempotency_key: str | None = None
    ) -> Proposal:
        """`POST /v1/proposals/{id}/approve`; Conflict (with `.current`) if already decided."""
        return await self._decide("approve", proposal_id, comment, idempotency_key)

    async def reject(
        self, proposal_id: str, comment: str | None = None, idempotency_key: str | None = None
    ) -> Proposal:
        """`POST /v1/proposals/{id}/reject`; Conflict (with `.current`) if already decided."""
        return await self._decide("reject", proposal_id, comment, idempotency_key)

    async def _decide(
        self, verb: str, proposal_id: str, comment: str | None, idempotency_key: str | None
    ) -> Proposal:
        endpoint = f"POST /v1/proposals/{{id}}/{verb}"
        try:
            result: Proposal = await self._post(
                adapters.PROPOSAL(),
                f"/v1/proposals/{_seg(proposal_id)}/{verb}",
                endpoint,
                "proposals.decide",
                Decision(comment=comment),
                idempotency_key or new_key(),
            )
        except Conflict as exc:
            check_conflict(endpoint, proposal_id, exc)
            raise
        check_decision(endpoint, verb, proposal_id, result)
        return result

    async def cancel_run(
        self, run_id: str, reason: str | None = None, idempotency_key: str | None = None
    ) -> Run:
        """`POST /v1/runs/{id}/cancel`; Conflict `run.terminal` if the run already ended."""
        endpoint = "POST /v1/runs/{id}/cancel"
        result: Run = await self._post(
            adapters.RUN(),
            f"/v1/runs/{_seg(run_id)}/cancel",
            endpoint,
            "runs.cancel",
            CancelRequest(reason=reason),
            idempotency_key or new_key(),
        )
        check_same(endpoint, "run_id", result.run_id, run_id, "run")
        return result

    async def inject(self, run_id: str, kind: str, params: dict[str, Any] | None = None) -> None:
        """`POST /v1/sim/runs/{id}/inject` (simulator only; not keyed, so never retried)."""
        try:
            body = InjectRequest.model_validate({"kind": kind, "params": params or {}})
        except ValidationError:
            raise ValidationFailed(
                f"Unknown fault kind {kind!r}", endpoint="POST /v1/sim/runs/{id}/inject"
            ) from None
        await self._post(
            None,
            f"/v1/sim/runs/{_seg(run_id)}/inject",
            "POST /v1/sim/runs/{id}/inject",
            "sim.inject",
            body,
            None,
        )

    # ------------------------------------------------------------ events

    def events(
        self,
        run_id: str,
        since_seq: int | None = None,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> EventStream:
        """The run's event stream: `async for event in client.events(run_id)`.

        `since_seq` resumes after that seq (sent as `Last-Event-ID`). The stream
        may also be awaited (`stream = await client.events(...)`) to check the
        `runs.events` capability before the first event is asked for.
        """
        # Imported here: the stream brings the ~40 event models, which a command
        # that sends requests only never needs (issue 8, #2b).
        from .stream import EventStream

        return EventStream(self, run_id, since_seq=since_seq, on_state=on_state)

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
    ) -> LogStream:
        """The run's job log: `async for item in client.logs(run_id)` yields `LogLine`s (and
        a `LogTruncated` where the server's retention lost lines), live until the run ends.

        `tail` lines that match are replayed first (None: the server's default); `since_seq`
        resumes exactly after that seq instead. `ranks`, `level` (minimum), `sources` and
        `q` (case-insensitive substring) filter, on every reconnect alike. A filter that is
        not valid raises ValidationFailed here. Await the stream to check `runs.logs` first.
        """
        from .logstream import LogStream

        query = log_query("GET /v1/runs/{id}/logs", ranks, level, sources, q)
        if tail is not None and (isinstance(tail, bool) or tail < 0):
            raise ValidationFailed(
                f"tail must be a whole number >= 0, not {tail!r}", endpoint="GET /v1/runs/{id}/logs"
            )
        return LogStream(self, run_id, query, tail=tail, since_seq=since_seq, on_state=on_state)


_seg = seg
