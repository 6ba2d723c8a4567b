"""`proposals`, `approve`, `reject`: human-gated actions, decided only by a person.

Approve and reject show the proposal's evidence and impact first and ask the
operator to type the word (`approve` / `reject`) on a terminal; `--yes` is for
scripts. Anything else typed does nothing. A decision someone else made first
is shown, not overwritten (exit 9).
"""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Any

from .context import CommandError, Context
from .exitcodes import ExitCode
from .ids import complete_ids
from .output import confirm, interactive, money, safe, schema_help
from .render import render_proposal, state_text

if TYPE_CHECKING:
    from ito_tui.client import ItoClient
    from ito_tui.contract import Proposal


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add proposals, approve and reject to the subcommands."""
    p = sub.add_parser(
        "proposals",
        parents=[common],
        formatter_class=fmt,
        help="a run's human-gated proposals (e.g. rollback after a loss spike)",
        description="List a run's proposals with their evidence, action and impact.",
        epilog="examples:\n  ito-tui proposals run_123\n  ito-tui proposals run_123 --json",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument("--status", choices=("pending", "approved", "rejected", "expired", "executed"))
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print a JSON array of Proposal", "Proposal"),
    )
    p.set_defaults(handler=cmd_proposals)

    for verb, what in (("approve", "carry out"), ("reject", "not carry out")):
        p = sub.add_parser(
            verb,
            parents=[common],
            formatter_class=fmt,
            help=f"{verb} a pending proposal (shows evidence, asks first)",
            description=f"{verb.capitalize()} a pending proposal: the backend will {what} "
            f"its action. Shows the evidence and impact, then asks you to type '{verb}' "
            "(--yes for scripts).",
            epilog=f"examples:\n  ito-tui {verb} prop_123\n"
            f"  ito-tui {verb} prop_123 --comment 'checked the loss curve' --yes",
        )
        complete_ids(p.add_argument("proposal", metavar="PROPOSAL"), "proposals")
        complete_ids(
            p.add_argument("--run", metavar="RUN", help="the proposal's run (found when omitted)"),
            "runs",
        )
        p.add_argument("--comment", metavar="TEXT", help="recorded with the decision")
        p.add_argument("--yes", "-y", action="store_true", help="decide without asking")
        p.set_defaults(handler=cmd_decide, verb=verb)


def cmd_proposals(ctx: Context) -> int:
    """List one run's proposals."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("proposals.read")
            items = await client.proposals(ctx.args.run, status=ctx.args.status)
        if ctx.args.json:
            ctx.out.json(items)
            return 0
        if not items:
            ctx.out.info(f"no proposals for {safe(ctx.args.run)}")
            return 0
        for i, prop in enumerate(items):
            if i:
                ctx.out.line()
            render_proposal(ctx.out, prop)
        return 0

    return ctx.run(body)


async def find_proposal(client: ItoClient, proposal_id: str, run_id: str | None) -> Proposal:
    """The proposal by id: from `run_id` if given, else the run that lists it as pending."""
    runs = [run_id] if run_id else None
    if runs is None:
        summaries = await client.runs()
        pending = [r.run_id for r in summaries if proposal_id in r.pending_proposal_ids]
        # Decided proposals are no longer listed as pending: look through the rest too.
        runs = pending or [r.run_id for r in summaries]
    for rid in runs:
        for prop in await client.proposals(rid):
            if prop.proposal_id == proposal_id:
                return prop
    raise CommandError(f"proposal {safe(proposal_id)} not found", ExitCode.NOT_FOUND)


def cmd_decide(ctx: Context) -> int:
    """Approve or reject one proposal after showing it."""
    from ito_tui.client.errors import Conflict

    verb: str = ctx.args.verb

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("proposals.decide")
            prop = await find_proposal(client, ctx.args.proposal, ctx.args.run)
            render_proposal(ctx.out, prop)
            if str(prop.status) != "pending":
                raise CommandError(
                    f"proposal {safe(prop.proposal_id)} is already {safe(prop.status)}; "
                    "nothing to decide",
                    ExitCode.REFUSED,
                )
            if not ctx.args.yes:
                if not interactive():
                    raise CommandError(
                        f"not decided: confirmation needed; pass --yes to {verb} without a "
                        "terminal",
                        ExitCode.USAGE,
                    )
                cost = money(prop.impact.added_usd)
                question = f"{verb.capitalize()} {safe(prop.proposal_id)} (impact +{cost})?"
                if not confirm(ctx.out, question, word=verb):
                    ctx.out.info("nothing decided")
                    return 0
            key = str(uuid.uuid4())
            try:
                if verb == "approve":
                    done = await client.approve(prop.proposal_id, ctx.args.comment, key)
                else:
                    done = await client.reject(prop.proposal_id, ctx.args.comment, key)
            except Conflict as exc:
                if exc.current is not None:
                    who = safe(exc.current.decided_by or "someone")
                    ctx.out.error(
                        f"{safe(exc)} — already {safe(exc.current.status)} by {who}; "
                        "your decision was not recorded"
                    )
                    return int(ExitCode.REFUSED)
                raise
            by = f" by {safe(done.decided_by)}" if done.decided_by else ""
            ctx.out.line(
                f"proposal {safe(done.proposal_id)} {state_text(ctx.out, done.status)}{by}"
            )
            return 0

    return ctx.run(body)
