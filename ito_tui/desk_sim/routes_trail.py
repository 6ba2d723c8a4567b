"""`GET /v1/proposals`: the decision trail, every proposal across runs, newest first."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ito_tui.contract import Page, Proposal, ProposalStatus

from .guards import DeskDep, Operator
from .problems import ApiError
from .routes_desk import Cursor, Limit, encode_cursor
from .trail import proposals_page, since_key

router = APIRouter(tags=["proposals"])

RFC3339 = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$"
"""An RFC 3339 date-time with its offset (a time without one would be ambiguous)."""

Since = Annotated[
    str | None,
    Query(
        pattern=RFC3339,
        max_length=64,
        description="RFC 3339 time (e.g. `2026-11-29T12:00:00Z`): proposals created at or "
        "after it.",
    ),
]
Filter = Annotated[str | None, Query(max_length=200)]


def parse_since(value: str) -> str:
    """The stored-text bound for `since`; 400 `request.invalid` when it is no real time."""
    try:
        return since_key(datetime.fromisoformat(value.upper()))
    except (ValueError, OverflowError):
        raise ApiError(
            "request.invalid",
            f"since {value!r} is not an RFC 3339 time",
            errors=[{"loc": ["query", "since"], "msg": "not an RFC 3339 time", "type": "value"}],
        ) from None


def decode_position(cursor: str | None) -> tuple[str, str] | None:
    """The (created_at, proposal_id) a cursor carries; 400 if this server did not issue it."""
    if cursor is None:
        return None
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        created, proposal_id = raw["c"], raw["p"]
        if not isinstance(created, str) or not isinstance(proposal_id, str):
            raise TypeError("c")
        return created, proposal_id
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise ApiError("request.invalid_cursor", "cursor is not one this server issued") from None


@router.get("/v1/proposals", response_model=Page[Proposal])
async def all_proposals(
    desk: DeskDep,
    _operator: Operator,
    status: Annotated[ProposalStatus | None, Query()] = None,
    run_id: Filter = None,
    decided_by: Filter = None,
    since: Since = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Response:
    """Every proposal across runs, newest first (`created_at`, then `proposal_id`, both
    descending): who decided what, when, with which comment, on which evidence.

    Filters combine; a run or operator that has no proposals gives an empty page. An
    expired proposal has `decided_at` (when it expired) and no `decided_by`.
    """
    after = decode_position(cursor)
    rows = proposals_page(
        desk.store.conn,
        status=status.value if status else None,
        run_id=run_id,
        decided_by=decided_by,
        since=parse_since(since) if since is not None else None,
        after=after,
        limit=limit + 1,
    )
    last = rows[limit - 1] if len(rows) > limit else None
    nxt = encode_cursor({"c": last[0], "p": last[1]}) if last else None
    # Bodies are stored as validated proposal JSON; splice them instead of re-encoding.
    bodies = ",".join(body for _c, _p, body in rows[:limit])
    content = '{"items":[' + bodies + '],"next_cursor":' + json.dumps(nxt) + "}"
    return Response(content, media_type="application/json")
