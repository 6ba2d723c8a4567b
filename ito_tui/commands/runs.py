"""`runs`, `status`, `watch` and `cancel`: looking at runs and stopping one.

`watch` follows the run's event stream through the shared `RunState` reducer
(so it agrees with the TUI by construction) and exits with the run's outcome:
0 completed, 3 stopped by a failed gate, 4 failed otherwise, 5 cancelled. When
the stream ends without the terminal event the outcome comes from the run's
snapshot (the stream re-reads it); a stream that ends with the run still going
is an error (1) that says so, never a silent "running".
"""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Any

from ito_tui.format import percent

from .context import CommandError, Context
from .exitcodes import ExitCode, exit_for_outcome
from .ids import complete_ids
from .output import confirm, interactive, money, safe, schema_help
from .render import render_run, spend_text, state_text
from .watchfmt import WatchPrinter

if TYPE_CHECKING:
    from ito_tui.client import ItoClient
    from ito_tui.state import RunState

RUN_STATES = (
    "queued", "preflight", "running", "awaiting_approval", "recovering", "gate_eval",
    "cancelling", "completed", "failed", "cancelled",
)  # fmt: skip


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add runs, status, watch and cancel to the subcommands."""
    p = sub.add_parser(
        "runs",
        parents=[common],
        formatter_class=fmt,
        help="list training runs",
        description="List training runs, newest first.",
        epilog="examples:\n  ito-tui runs\n  ito-tui runs --state running --json",
    )
    p.add_argument("--state", choices=RUN_STATES, help="only runs in this state")
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print a JSON array of RunSummary", "RunSummary"),
    )
    p.set_defaults(handler=cmd_runs)

    p = sub.add_parser(
        "status",
        parents=[common],
        formatter_class=fmt,
        help="one run's state, stages, gates and spend",
        description="Show a run snapshot: state, stages with progress and gates, spend, "
        "pending proposals and failure.",
        epilog="examples:\n  ito-tui status run_123\n  ito-tui status run_123 --json",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print the Run as JSON", "Run"),
    )
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser(
        "watch",
        parents=[common],
        formatter_class=fmt,
        help="follow a run's events; exit with its outcome",
        description="Follow a run's event stream until it ends (reconnecting as needed) and "
        "exit with its outcome: 0 completed, 3 failed gate, 4 failed, 5 cancelled. Human "
        "lines start from the current snapshot; --json prints every event from the start "
        "(one JSON object per line) unless --since is given.",
        epilog="examples:\n  ito-tui watch run_123\n  ito-tui watch run_123 --json | jq .type",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--json",
        action="store_true",
        help="one event envelope per line, as on the SSE stream: "
        "{seq, run_id, type, ts, sim_ts, stage, data} (payload schemas: ito-tui contract)",
    )
    p.add_argument("--since", metavar="SEQ", type=int, help="replay events after this seq")
    p.set_defaults(handler=cmd_watch)

    p = sub.add_parser(
        "cancel",
        parents=[common],
        formatter_class=fmt,
        help="cancel a run (asks first)",
        description="Cancel a run. Restates what has been spent and asks for confirmation "
        "(type 'cancel' on a terminal; --yes for scripts).",
        epilog="examples:\n  ito-tui cancel run_123\n"
        "  ito-tui cancel run_123 --yes --reason 'wrong data'",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument("--reason", help="why (recorded with the cancellation)")
    p.add_argument("--yes", "-y", action="store_true", help="cancel without asking")
    p.set_defaults(handler=cmd_cancel)


def cmd_runs(ctx: Context) -> int:
    """List runs as a table or JSON."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.read")
            items = await client.runs(state=ctx.args.state)
        if ctx.args.json:
            ctx.out.json(items)
            return 0
        if not items:
            ctx.out.info("no runs")
            return 0
        rows = []
        for r in items:
            prog = percent(r.stage_progress_frac) if r.stage_progress_frac is not None else ""
            rows.append(
                [
                    safe(r.run_id),
                    safe(r.booking_id),
                    safe(r.model_size or "-"),
                    state_text(ctx.out, r.state),
                    safe(r.current_stage or "-"),
                    prog,
                    f"{money(r.spend.usd_spent)} / {money(r.spend.budget_usd)}",
                    str(len(r.pending_proposal_ids)) if r.pending_proposal_ids else "",
                ]
            )
        headers = ("run", "booking", "model", "state", "stage", "progress", "spend", "proposals")
        ctx.out.table(headers, rows)
        return 0

    return ctx.run(body)


def cmd_status(ctx: Context) -> int:
    """Print one run snapshot."""

    async def body() -> int:
        async with ctx.client() as client:
            run = await client.run(ctx.args.run)
        if ctx.args.json:
            ctx.out.json(run)
        else:
            render_run(ctx.out, run)
        return 0

    return ctx.run(body)


def cmd_watch(ctx: Context) -> int:
    """Follow a run until it ends; exit with its outcome."""

    async def body() -> int:
        async with ctx.client() as client:
            since = ctx.args.since
            if since is None and ctx.args.json:
                since = 0
            return await follow(ctx, client, ctx.args.run, as_json=ctx.args.json, since_seq=since)

    return ctx.run(body)


async def follow(
    ctx: Context, client: ItoClient, run_id: str, *, as_json: bool, since_seq: int | None
) -> int:
    """Stream a run's events from `since_seq` (None: from its snapshot) to the end."""
    from ito_tui.state import RunState
    from ito_tui.state.tracker import rebased

    await client.require("runs.events")
    run = await client.run(run_id)
    state: RunState = RunState.from_run(run)
    printer = WatchPrinter(ctx.out, as_json=as_json)
    if since_seq is None:
        since_seq = run.last_event_seq
        if not as_json:
            render_run(ctx.out, run)
    if not (run.terminal and since_seq >= run.last_event_seq):
        from ito_tui.client import ItoError

        stream = client.events(run_id, since_seq=since_seq, on_state=printer.connection)
        seen = since_seq
        try:
            async for event in stream:
                seen = event.seq
                if event.type == "resync" and event.seq <= state.last_seq:
                    # The stream re-read a snapshot behind what it had yielded (the
                    # backend's history went backwards) or the run's end: re-base on it.
                    state = rebased(state, getattr(event, "data"))  # noqa: B009
                else:
                    state = state.apply(event)
                printer.event(event)
                if event.terminal:
                    break  # (a re-read snapshot that ends the run ends the stream itself)
        except ItoError:
            # Losing the stream stops the watching, not the run: say how to pick it up.
            ctx.out.info(
                f"stopped following {safe(run_id)} after seq {seen}; the run goes on — "
                f"resume with: ito-tui watch {safe(run_id)} --since {seen}"
            )
            raise
        finally:
            await stream.aclose()
            printer.close()
    if not state.terminal:
        raise CommandError(
            f"the event stream of {safe(run_id)} ended after seq {state.last_seq} while the run "
            f"is {safe(state.state)}; resume with: ito-tui watch {safe(run_id)}",
            ExitCode.ERROR,
        )
    return finish(ctx, state, as_json=as_json)


def finish(ctx: Context, state: RunState, *, as_json: bool) -> int:
    """Say how the run ended (human mode) and return the exit code for its outcome."""
    outcome = state.outcome
    code = exit_for_outcome(outcome)
    if as_json:
        return int(code)
    spend = state.spend
    spent = f"; {money(spend.usd_spent)} spent of {money(spend.budget_usd)}" if spend else ""
    detail = f": {safe(state.detail)}" if state.detail else ""
    if state.failure is not None and not state.detail:
        detail = f": {safe(state.failure.detail)}"
    ctx.out.line(
        f"run {safe(state.run_id)} {state_text(ctx.out, outcome or state.state)}{detail}{spent}"
    )
    return int(code)


def cmd_cancel(ctx: Context) -> int:
    """Restate spend, confirm, cancel with an Idempotency-Key."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.cancel")
            run = await client.run(ctx.args.run)
            if run.terminal:
                raise CommandError(
                    f"run {safe(run.run_id)} is already {safe(run.state)}; nothing to cancel",
                    ExitCode.REFUSED,
                )
            ctx.out.line(
                f"run {safe(run.run_id)} ({state_text(ctx.out, run.state)}, stage "
                f"{safe(run.current_stage or '-')}) on booking {safe(run.booking_id)}"
            )
            ctx.out.line(f"  {spend_text(run)}")
            ctx.out.line("  cancelling stops training; what was spent stays spent")
            if not ctx.args.yes:
                if not interactive():
                    raise CommandError(
                        "not cancelled: confirmation needed; pass --yes without a terminal",
                        ExitCode.USAGE,
                    )
                if not confirm(ctx.out, f"Cancel {safe(run.run_id)}?", word="cancel"):
                    ctx.out.info("not cancelled")
                    return 0
            after = await client.cancel_run(
                run.run_id, reason=ctx.args.reason, idempotency_key=str(uuid.uuid4())
            )
            ctx.out.line(f"run {safe(after.run_id)} is {state_text(ctx.out, after.state)}")
            return 0

    return ctx.run(body)
