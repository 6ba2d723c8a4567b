"""The decision-trail checks of `ito-tui check-backend` (`GET /v1/proposals`, API.md v1.1).

Read-only: a page of the trail is a page of Proposal, newest first, no longer than its
`limit`; a `status` filter holds for every item; a `since` that is no time is refused.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from ito_tui.contract import Page, Proposal

from .conformance import (
    CheckFailed,
    ConformanceReport,
    Probe,
    expect_model,
    expect_problem,
    expect_status,
    run_check,
)

__all__ = ["trail_checks"]

PATH = "/v1/proposals"


async def trail_checks(probe: Probe, report: ConformanceReport) -> None:
    """Run the trail's checks (the caller checked the backend offers `proposals.read`)."""
    page = TypeAdapter(Page[Proposal])

    async def listing() -> str:
        answer = await probe.call("GET", PATH, params={"limit": 5})
        expect_status(answer, 200)
        items = expect_model(answer, page).items
        if len(items) > 5:
            raise CheckFailed(f"limit=5 returned {len(items)} proposals")
        for index in range(1, len(items)):
            if items[index].created_at > items[index - 1].created_at:
                raise CheckFailed(
                    f"item {index} ({items[index].proposal_id}) is newer than item "
                    f"{index - 1}: the trail is not newest first"
                )
        return f"{len(items)} proposals for limit=5, newest first"

    async def status_filter() -> str:
        answer = await probe.call("GET", PATH, params={"status": "rejected", "limit": 20})
        expect_status(answer, 200)
        items = expect_model(answer, page).items
        other = next((p for p in items if str(p.status) != "rejected"), None)
        if other is not None:
            raise CheckFailed(f"status=rejected listed {other.proposal_id}, {other.status}")
        return f"{len(items)} rejected proposals, all rejected"

    async def bad_since() -> str:
        answer = await probe.call("GET", PATH, params={"since": "not-a-time"})
        expect_problem(answer, 400, "request.invalid")
        return "400 request.invalid"

    # Independent of each other: a trail out of order may still filter, and refuse a bad since.
    await run_check(report, "proposals.trail", listing)
    await run_check(report, "proposals.trail_status", status_filter)
    await run_check(report, "proposals.trail_invalid_since", bad_since)
