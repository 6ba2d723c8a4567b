"""`decisions`: the decision trail across runs — who decided which proposal, when, and why.

One row per proposal, newest first (`GET /v1/proposals`, capability `proposals.read`):
the proposal, its run, kind and status, who decided it (or that expiry rejected it),
when (date and UTC time) and the comment recorded with the decision. Filters are sent
to the backend, and the client checks every answer against them. `--since` takes a date
(`2026-12-01`, midnight UTC) or a full RFC 3339 time; anything else exits 2 naming the
flag. `--json` prints a JSON array of Proposal, as `runs --json` prints its list.
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ito_tui.describe import proposal_words
from ito_tui.format import MISSING

from .context import Context
from .ids import complete_ids
from .output import safe, schema_help
from .render import PROPOSAL_STATUSES, state_text

if TYPE_CHECKING:
    from ito_tui.contract import Proposal

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2}))?"
)


def since_arg(text: str) -> datetime:
    """`--since`: `2026-12-01` (midnight UTC) or an RFC 3339 time with its offset."""
    if not _RFC3339.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(
            f"not a date or an RFC 3339 time: {text!r} (e.g. 2026-12-01 or 2026-12-01T09:30:00Z)"
        )
    value = text.strip()
    # fromisoformat reads at most microseconds: a nanosecond fraction is cut to them.
    value = re.sub(r"(\.\d{6})\d+", r"\1", value)
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError as exc:  # e.g. 2026-02-30: the right shape, not a real day
        raise argparse.ArgumentTypeError(f"not a real date or time: {text!r} ({exc})") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `decisions` to the subcommands."""
    p = sub.add_parser(
        "decisions",
        parents=[common],
        formatter_class=fmt,
        help="the decision trail: every proposal across runs, who decided it and when",
        description="List proposals across all runs, newest first: run, kind, status, who "
        "decided (or expiry), when (UTC) and the comment. The filters combine.",
        epilog="examples:\n  ito-tui decisions\n  ito-tui decisions --by bob --since 2026-12-01\n"
        "  ito-tui decisions --run run_123 --status approved --json",
    )
    complete_ids(p.add_argument("--run", metavar="RUN", help="only this run's"), "runs")
    p.add_argument("--status", choices=PROPOSAL_STATUSES, help="only proposals in this status")
    p.add_argument("--by", metavar="OPERATOR", help="only those this operator decided")
    p.add_argument(
        "--since",
        metavar="DATE",
        type=since_arg,
        help="only those created at or after DATE: 2026-12-01 (UTC) or RFC 3339",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print a JSON array of Proposal", "Proposal"),
    )
    p.set_defaults(handler=cmd_decisions)


HEADERS = ("proposal", "run", "kind", "status", "decided by", "when (UTC)", "comment")


def decision_row(ctx: Context, p: Proposal) -> list[str]:
    """One table row: who decided and when; expiry names itself as the decider."""
    expired = str(p.status) == "expired"
    by = safe(p.decided_by) if p.decided_by else "(expiry)" if expired else MISSING
    at = p.decided_at or (p.expires_at if expired else None)
    when = f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S}" if at is not None else MISSING
    return [
        safe(p.proposal_id),
        safe(p.run_id),
        proposal_words(p.kind).short,
        state_text(ctx.out, p.status),
        by,
        when,
        safe(p.comment) if p.comment else "",
    ]


def cmd_decisions(ctx: Context) -> int:
    """List the decision trail, newest first."""
    a = ctx.args

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("proposals.read")
            items = await client.all_proposals(
                status=a.status, run_id=a.run, decided_by=a.by, since=a.since
            )
        if a.json:
            ctx.out.json(items)
            return 0
        if not items:
            ctx.out.info("no proposals match")
            return 0
        ctx.out.table(HEADERS, (decision_row(ctx, p) for p in items))
        return 0

    return ctx.run(body)
