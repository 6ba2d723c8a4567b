"""The checks `ito-tui check-backend` runs, in order, against one backend."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pydantic import TypeAdapter

from ito_tui.contract import (
    Booking,
    Capabilities,
    Checkpoint,
    Estimate,
    Page,
    Proposal,
    Run,
    RunSummary,
    TelemetryPage,
    WhoAmI,
)

from . import headers as wire
from .conformance import (
    CAPABILITIES,
    CheckFailed,
    ConformanceReport,
    Probe,
    SkipCheck,
    expect_model,
    expect_problem,
    expect_status,
    new_key,
    run_check,
)
from .conformance_diagnose import diagnose_checks
from .conformance_sse import sse_checks
from .conformance_trail import trail_checks
from .http import TokenSource

__all__ = ["check_backend"]

MISSING_RUN = "run_conformance_does_not_exist"
MISSING_BOOKING = "bk_conformance_does_not_exist"

# Where to knock to see a capability's 501. The bodies are deliberately invalid,
# so a server that does implement the capability refuses them and changes nothing.
CAPABILITY_PROBES: dict[str, tuple[str, str, Any]] = {
    "bookings.read": ("GET", "/v1/bookings", None),
    "estimates.create": ("POST", "/v1/estimates", {}),
    "runs.create": ("POST", "/v1/runs", {}),
    "runs.read": ("GET", "/v1/runs", None),
    "runs.events": ("GET", f"/v1/runs/{MISSING_RUN}/events", None),
    "runs.telemetry": ("GET", f"/v1/runs/{MISSING_RUN}/telemetry", None),
    "runs.logs": ("GET", f"/v1/runs/{MISSING_RUN}/logs/page", None),
    "runs.fleet": ("GET", f"/v1/runs/{MISSING_RUN}/fleet", None),
    "runs.cancel": ("POST", f"/v1/runs/{MISSING_RUN}/cancel", {}),
    "proposals.read": ("GET", f"/v1/runs/{MISSING_RUN}/proposals", None),
    "proposals.decide": ("POST", "/v1/proposals/prop_conformance_missing/reject", {}),
}


class _Context:
    """What earlier checks learned that later ones use."""

    def __init__(self) -> None:
        self.caps: Capabilities | None = None
        self.bookings: list[Booking] = []
        self.runs: list[RunSummary] = []


async def check_backend(
    base_url: str,
    token: TokenSource | None,
    *,
    allow_writes: bool = False,
    insecure_http: bool = False,
    ca_bundle: str | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 - per-request HTTP timeout, not a deadline
) -> ConformanceReport:
    """Run every check against `base_url` and return the report (never raises for a check)."""
    probe = Probe(
        base_url, token=token, insecure_http=insecure_http, ca_bundle=ca_bundle, timeout=timeout
    )
    report = ConformanceReport(backend=probe.base_url)
    ctx = _Context()
    try:
        await _run_all(probe, report, ctx, allow_writes)
    finally:
        await probe.aclose()
    return report


async def _run_all(
    probe: Probe, report: ConformanceReport, ctx: _Context, allow_writes: bool
) -> None:
    async def capabilities() -> str:
        answer = await probe.call("GET", "/v1/capabilities", auth=False)
        expect_status(answer, 200)
        ctx.caps = expect_model(answer, CAPABILITIES)
        report.server = ctx.caps.server.model_dump(mode="json")
        report.capabilities = [c.model_dump(mode="json") for c in ctx.caps.capabilities]
        if ctx.caps.api_version != "v1":
            raise CheckFailed(f"api_version is {ctx.caps.api_version!r}, this client speaks v1")
        return f"{ctx.caps.server.name} {ctx.caps.server.version} ({ctx.caps.server.mode})"

    if not await run_check(report, "capabilities.schema", capabilities):
        return

    async def no_token() -> str:
        expect_problem(await probe.call("GET", "/v1/whoami", auth=False), 401, "auth.invalid")
        return "401 auth.invalid"

    async def bad_token() -> str:
        answer = await probe.call("GET", "/v1/whoami", auth="conformance-not-a-token")
        expect_problem(answer, 401, "auth.invalid")
        return "401 auth.invalid"

    async def whoami() -> str:
        answer = await probe.call("GET", "/v1/whoami")
        expect_status(answer, 200)
        return f"operator {expect_model(answer, WhoAmI).operator!r}"

    async def not_found() -> str:
        answer = await probe.call("GET", f"/v1/runs/{MISSING_RUN}")
        expect_problem(answer, 404, "run.not_found")
        return "404 run.not_found as problem+json"

    await run_check(report, "auth.missing_token", no_token)
    await run_check(report, "auth.invalid_token", bad_token)
    if not await run_check(report, "auth.whoami", whoami):
        return
    await run_check(report, "errors.problem_json", not_found)
    await _capability_checks(probe, report, ctx)
    await _booking_checks(probe, report, ctx)
    await _run_checks(probe, report, ctx)
    if ctx.caps is not None and ctx.caps.has("proposals.read"):
        await trail_checks(probe, report)
    await _estimate_checks(probe, report, ctx)
    if allow_writes:
        await _write_checks(probe, report, ctx)

    async def request_ids() -> str:
        if probe.request_ids_missing:
            raise CheckFailed("no X-Request-Id on: " + "; ".join(probe.request_ids_missing[:5]))
        return "every answer carried X-Request-Id"

    await run_check(report, "headers.x_request_id", request_ids)


async def _capability_checks(probe: Probe, report: ConformanceReport, ctx: _Context) -> None:
    assert ctx.caps is not None
    for cap in ctx.caps.capabilities:
        if str(cap.status) != "not_implemented" or cap.name not in CAPABILITY_PROBES:
            continue
        method, path, body = CAPABILITY_PROBES[cap.name]

        async def probe_501(
            method: str = method, path: str = path, body: Any = body, name: str = cap.name
        ) -> str:
            headers = {"Idempotency-Key": new_key()} if method == "POST" else None
            answer = await probe.call(method, path, json_body=body, headers=headers)
            problem = expect_problem(answer, 501, "capability.not_implemented")
            named = getattr(problem, "capability", None)
            if named != name:
                raise CheckFailed(f"501 names capability {named!r}, expected {name!r}")
            return f"501 names {name}"

        await run_check(report, f"capability.{cap.name}.501", probe_501)


async def _booking_checks(probe: Probe, report: ConformanceReport, ctx: _Context) -> None:
    page = TypeAdapter(Page[Booking])

    async def bookings() -> str:
        answer = await probe.call("GET", "/v1/bookings")
        expect_status(answer, 200)
        ctx.bookings = expect_model(answer, page).items
        return f"{len(ctx.bookings)} bookings"

    async def pagination() -> str:
        first = expect_model(await probe.call("GET", "/v1/bookings", params={"limit": 1}), page)
        if len(first.items) > 1:
            raise CheckFailed(f"limit=1 returned {len(first.items)} items")
        if first.next_cursor is None:
            raise SkipCheck("one booking or fewer: nothing to page through")
        second = await probe.call(
            "GET", "/v1/bookings", params={"limit": 1, "cursor": first.next_cursor}
        )
        expect_status(second, 200)
        nxt = expect_model(second, page)
        if nxt.items and first.items and nxt.items[0].booking_id == first.items[0].booking_id:
            raise CheckFailed("the second page repeats the first")
        return "limit and next_cursor page through the collection"

    async def bad_cursor() -> str:
        answer = await probe.call("GET", "/v1/bookings", params={"cursor": "!!not-a-cursor!!"})
        expect_problem(answer, 400, "request.invalid_cursor")
        return "400 request.invalid_cursor"

    async def booking_get() -> str:
        if not ctx.bookings:
            raise SkipCheck("the backend lists no bookings")
        bid = ctx.bookings[0].booking_id
        answer = await probe.call("GET", f"/v1/bookings/{bid}")
        expect_status(answer, 200)
        if expect_model(answer, Booking).booking_id != bid:
            raise CheckFailed("GET /v1/bookings/{id} returned another booking")
        return bid

    async def booking_404() -> str:
        answer = await probe.call("GET", f"/v1/bookings/{MISSING_BOOKING}")
        expect_problem(answer, 404, "booking.not_found")
        return "404 booking.not_found"

    if await run_check(report, "bookings.list", bookings):
        await run_check(report, "bookings.pagination", pagination)
        await run_check(report, "bookings.invalid_cursor", bad_cursor)
        await run_check(report, "bookings.get", booking_get)
        await run_check(report, "bookings.not_found", booking_404)


async def _run_checks(probe: Probe, report: ConformanceReport, ctx: _Context) -> None:
    async def runs() -> str:
        answer = await probe.call("GET", "/v1/runs")
        expect_status(answer, 200)
        ctx.runs = expect_model(answer, TypeAdapter(Page[RunSummary])).items
        return f"{len(ctx.runs)} runs"

    if not await run_check(report, "runs.list", runs):
        return
    if not ctx.runs:
        await run_check(report, "runs.resources", _skip("the backend has no runs to read"))
        return
    finished = [r for r in ctx.runs if str(r.state) in ("completed", "failed", "cancelled")]
    run_id = (finished or ctx.runs)[0].run_id

    async def run_get() -> str:
        answer = await probe.call("GET", f"/v1/runs/{run_id}")
        expect_status(answer, 200)
        run = expect_model(answer, Run)
        return f"{run_id}: state {run.state}, last_event_seq {run.last_event_seq}"

    async def telemetry() -> str:
        answer = await probe.call("GET", f"/v1/runs/{run_id}/telemetry", params={"max_points": 5})
        expect_status(answer, 200)
        page = expect_model(answer, TelemetryPage)
        if len(page.items) > 5:
            raise CheckFailed(f"max_points=5 returned {len(page.items)} samples")
        return f"{len(page.items)} samples for max_points=5"

    async def checkpoints() -> str:
        answer = await probe.call("GET", f"/v1/runs/{run_id}/checkpoints")
        expect_status(answer, 200)
        return f"{len(expect_model(answer, TypeAdapter(list[Checkpoint])))} checkpoints"

    async def proposals() -> str:
        answer = await probe.call("GET", f"/v1/runs/{run_id}/proposals")
        expect_status(answer, 200)
        return f"{len(expect_model(answer, TypeAdapter(list[Proposal])))} proposals"

    await run_check(report, "runs.get", run_get)
    await run_check(report, "runs.telemetry", telemetry)
    await run_check(report, "runs.checkpoints", checkpoints)
    await run_check(report, "runs.proposals", proposals)
    await sse_checks(probe, report, run_id, terminal=bool(finished))
    await diagnose_checks(probe, report, ctx.caps, run_id, terminal=bool(finished))


def _usable_booking(ctx: _Context) -> Booking | None:
    return next((b for b in ctx.bookings if str(b.status) == "completed"), None)


def _minimal_spec(ctx: _Context, booking: Booking) -> dict[str, Any]:
    assert ctx.caps is not None
    size = ctx.caps.model_sizes[0] if ctx.caps.model_sizes else "150M"
    target = ctx.caps.target_capabilities[0] if ctx.caps.target_capabilities else "general"
    budget = min(Decimal(1000), ctx.caps.limits.max_budget_usd)
    return {
        "booking_id": booking.booking_id,
        "model_size": size,
        "data_ref": "catalog://conformance-probe@1",
        "target_capability": target,
        "budget_usd": f"{budget:.2f}",
        "target_tokens": 1_000_000,
    }


async def _estimate_checks(probe: Probe, report: ConformanceReport, ctx: _Context) -> None:
    assert ctx.caps is not None
    if not ctx.caps.has("estimates.create"):
        return
    booking = _usable_booking(ctx)

    async def estimate() -> str:
        if booking is None:
            raise SkipCheck("no completed booking to estimate on")
        answer = await probe.call("POST", "/v1/estimates", json_body=_minimal_spec(ctx, booking))
        expect_status(answer, 200)
        est = expect_model(answer, Estimate)
        return f"p50 ${est.usd_p50}, {len(est.refusals)} refusals"

    async def unknown_field() -> str:
        body = {**_minimal_spec(ctx, booking), "not_a_field": 1} if booking else {"x": 1}
        answer = await probe.call("POST", "/v1/estimates", json_body=body)
        problem = expect_problem(answer, 422, "validation.failed")
        if not problem.errors:
            raise CheckFailed("422 validation.failed without errors[]")
        return "422 validation.failed with errors[]"

    await run_check(report, "estimates.create", estimate)
    await run_check(report, "validation.unknown_field", unknown_field)


async def _write_checks(probe: Probe, report: ConformanceReport, ctx: _Context) -> None:
    assert ctx.caps is not None
    if not ctx.caps.has("runs.create"):
        return
    booking = _usable_booking(ctx)
    key = new_key()
    created: list[Run] = []

    async def key_missing() -> str:
        if booking is None:
            raise SkipCheck("no completed booking")
        answer = await probe.call("POST", "/v1/runs", json_body=_minimal_spec(ctx, booking))
        expect_problem(answer, 400, "idempotency.key_missing")
        return "400 idempotency.key_missing"

    async def submit() -> str:
        if booking is None:
            raise SkipCheck("no completed booking")
        answer = await probe.call(
            "POST",
            "/v1/runs",
            json_body=_minimal_spec(ctx, booking),
            headers={"Idempotency-Key": key},
        )
        expect_status(answer, 202)
        if wire.location(answer.headers) is None:
            raise CheckFailed("202 without a (well-formed) Location header")
        created.append(expect_model(answer, Run))
        return f"accepted {created[0].run_id}"

    async def replay() -> str:
        if not created or booking is None:
            raise SkipCheck("no run was created")
        answer = await probe.call(
            "POST",
            "/v1/runs",
            json_body=_minimal_spec(ctx, booking),
            headers={"Idempotency-Key": key},
        )
        expect_status(answer, 202)
        if wire.replayed(answer.headers) is not True:
            raise CheckFailed("a replay did not say Idempotent-Replayed: true")
        if expect_model(answer, Run).run_id != created[0].run_id:
            raise CheckFailed("a replay created a second run")
        return "same key and body replayed the stored answer"

    async def key_reused() -> str:
        if not created or booking is None:
            raise SkipCheck("no run was created")
        body = {**_minimal_spec(ctx, booking), "budget_usd": "999.00"}
        answer = await probe.call(
            "POST", "/v1/runs", json_body=body, headers={"Idempotency-Key": key}
        )
        expect_problem(answer, 422, "idempotency.key_reused")
        return "422 idempotency.key_reused"

    async def cancel() -> str:
        if not created:
            raise SkipCheck("no run was created")
        answer = await probe.call(
            "POST",
            f"/v1/runs/{created[0].run_id}/cancel",
            json_body={},
            headers={"Idempotency-Key": new_key()},
        )
        expect_status(answer, 202, 409)
        return f"cancelled {created[0].run_id} (answer {answer.status})"

    await run_check(report, "idempotency.key_missing", key_missing)
    await run_check(report, "runs.create", submit)
    await run_check(report, "idempotency.replay", replay)
    await run_check(report, "idempotency.key_reused", key_reused)
    await run_check(report, "runs.cancel", cancel)


def _skip(reason: str) -> Any:
    async def skipped() -> str:
        raise SkipCheck(reason)

    return skipped


def report_json(report: ConformanceReport) -> str:
    return json.dumps(report.to_json(), indent=2)
