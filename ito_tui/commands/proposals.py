"""`proposals`, `approve`, `reject`: human-gated actions, decided only by a person.

Approve and reject show the proposal's evidence and impact first and ask the
operator to type the word (`approve` / `reject`) on a terminal; `--yes` is for
scripts. Anything else typed does nothing. A decision someone else made first
is shown, not overwritten (exit 9). With `--json` stdout carries the Proposal as
decided (or, when someone else decided first, as they decided it) and the evidence
goes to stderr. `proposals --pending` without a run lists what waits across all runs.
"""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Any

from ito_tui.describe import consequence, proposal_words, reject_consequence

from .context import CommandError, Context
from .exitcodes import ExitCode
from .ids import complete_ids
from .output import confirm, interactive, safe, schema_help
from .render import PROPOSAL_STATUSES, render_proposal, state_text

if TYPE_CHECKING:
    from ito_tui.client import ItoClient
    from ito_tui.contract import Proposal


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add proposals, approve and reject to the subcommands."""
    p = sub.add_parser(
        "proposals",
        parents=[common],
        formatter_class=fmt,
        help="human-gated proposals (e.g. rollback after a loss spike) of a run or all runs",
        description="List proposals with their evidence, action and impact: a run's, or "
        "without RUN those of every run (newest first). --pending: only those waiting for "
        "a person.",
        epilog="examples:\n  ito-tui proposals run_123\n  ito-tui proposals --pending\n"
        "  ito-tui proposals --pending --json | jq -r '.[].proposal_id'",
    )
    complete_ids(
        p.add_argument("run", metavar="RUN", nargs="?", help="a run (default: every run)"),
        "runs",
    )
    p.add_argument("--status", choices=PROPOSAL_STATUSES, help="only proposals in this status")
    p.add_argument("--pending", action="store_true", help="only pending ones (--status pending)")
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
        p.add_argument(
            "--json",
            action="store_true",
            help=schema_help(
                "print the Proposal as decided (if someone decided first: as they did, exit "
                "9) as JSON; the evidence and the prompt go to stderr",
                "Proposal",
            ),
        )
        p.set_defaults(handler=cmd_decide, verb=verb)


def cmd_proposals(ctx: Context) -> int:
    """List one run's proposals, or every run's."""
    status: str | None = ctx.args.status
    if ctx.args.pending:
        if status not in (None, "pending"):
            ctx.out.error(f"--pending and --status {safe(status)} contradict each other")
            return int(ExitCode.USAGE)
        status = "pending"
    run_id: str | None = ctx.args.run

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("proposals.read")
            if run_id is None:
                items = await client.all_proposals(status=status)
            else:
                items = await client.proposals(run_id, status=status)
        if ctx.args.json:
            ctx.out.json(items)
            return 0
        if not items:
            what = f"{status} proposals" if status else "proposals"
            ctx.out.info(f"no {what} " + (f"for {safe(run_id)}" if run_id else "on any run"))
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


def confirm_question(p: Proposal, verb: str) -> str:
    """The question asked before a decision, in the words of the TUI's confirmation step:
    `Approving raises the run's budget by $1,500.00; … Raise the run's budget?`."""
    if verb == "approve":
        return f"{consequence(p)} {proposal_words(p.kind).confirm_title}"
    return f"{reject_consequence(p)} Reject {safe(p.proposal_id)}?"


def cmd_decide(ctx: Context) -> int:
    """Approve or reject one proposal after showing it."""
    from ito_tui.client.errors import Conflict

    verb: str = ctx.args.verb
    as_json: bool = ctx.args.json
    # With --json stdout carries the Proposal only; what a person reads goes to stderr.
    shown = ctx.out.to_stderr() if as_json else ctx.out

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("proposals.decide")
            prop = await find_proposal(client, ctx.args.proposal, ctx.args.run)
            render_proposal(shown, prop)
            if str(prop.status) != "pending":
                if as_json:
                    ctx.out.json(prop)
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
                question = confirm_question(prop, verb)
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
                current = exc.current
                if current is None and exc.code == "proposal.expired":
                    # Expiry decided first (it rejects): show the proposal as it is now.
                    current = await find_proposal(client, prop.proposal_id, prop.run_id)
                if current is not None:
                    if as_json:
                        ctx.out.json(current)
                    by = f" by {safe(current.decided_by)}" if current.decided_by else ""
                    ctx.out.error(
                        f"{safe(exc)} — already {safe(current.status)}{by}; "
                        "your decision was not recorded"
                    )
                    return int(ExitCode.REFUSED)
                raise
            if as_json:
                ctx.out.json(done)
                return 0
            by = f" by {safe(done.decided_by)}" if done.decided_by else ""
            ctx.out.line(
                f"proposal {safe(done.proposal_id)} {state_text(ctx.out, done.status)}{by}"
            )
            return 0

    return ctx.run(body)
