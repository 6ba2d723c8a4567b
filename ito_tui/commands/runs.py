"""`runs`, `status`, `checkpoints`, `watch` and `cancel`: looking at runs and stopping one.

`watch` follows the run to its end and exits with its outcome (commands/follow.py
says how); `--until` stops it earlier and `--alert-command` runs a command per alert
(commands/alerts.py). `cancel --if-running` treats a run that already ended as done.
"""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Any

from ito_tui.format import MISSING, fixed, integer, percent, stage_label, usd

from .context import CommandError, Context
from .exitcodes import ExitCode
from .follow import UNTIL_CHOICES
from .ids import complete_ids
from .output import confirm, interactive, safe, schema_help, to_jsonable
from .render import render_run, spend_text, state_text

if TYPE_CHECKING:
    from ito_tui.contract import Run

RUN_STATES = (
    "queued", "preflight", "running", "awaiting_approval", "recovering", "gate_eval",
    "cancelling", "completed", "failed", "cancelled",
)  # fmt: skip
TERMINAL = frozenset({"completed", "failed", "cancelled"})
ACTIVE = "active"
"""`runs --state active`: every state but the terminal ones (completed, failed, cancelled)."""


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add runs, status, checkpoints, watch and cancel to the subcommands."""
    p = sub.add_parser(
        "runs",
        parents=[common],
        formatter_class=fmt,
        help="list training runs",
        description="List training runs, newest first. --state active lists every run "
        "that has not ended (all states but completed, failed and cancelled).",
        epilog="examples:\n  ito-tui runs\n  ito-tui runs --state active\n"
        "  ito-tui runs --state running --json",
    )
    p.add_argument(
        "--state", choices=(*RUN_STATES, ACTIVE), help="only runs in this state (or active)"
    )
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
        "pending proposals and failure; once the run has ended, its summary: final loss per "
        "stage, gates, wall time, GPU-hours and cost against the estimate's p50/p90, "
        "interruptions and lost steps, rollbacks (a fact the backend did not send is —).",
        epilog="examples:\n  ito-tui status run_123\n  ito-tui status run_123 --json",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help(
            "print the Run as JSON, with a `summary` member once it has ended (null before)",
            "Run",
        ),
    )
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser(
        "checkpoints",
        parents=[common],
        formatter_class=fmt,
        help="a run's checkpoints, with their ids",
        description="List a run's checkpoints, oldest first (the Ckpts tab's twin): id, "
        "when saved (UTC), stage, step, size, blocking and persist time, write bandwidth.",
        epilog="examples:\n  ito-tui checkpoints run_123\n"
        "  ito-tui checkpoints run_123 --json | jq -r '.[-1].checkpoint_id'",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print a JSON array of Checkpoint", "Checkpoint"),
    )
    p.set_defaults(handler=cmd_checkpoints)

    _register_watch(sub, common, fmt)

    p = sub.add_parser(
        "cancel",
        parents=[common],
        formatter_class=fmt,
        help="cancel a run (asks first)",
        description="Cancel a run. Restates what has been spent and asks for confirmation "
        "(type 'cancel' on a terminal; --yes for scripts). A run that already ended is "
        "refused (exit 9) unless --if-running is given (then: exit 0, and it says so).",
        epilog="examples:\n  ito-tui cancel run_123\n"
        "  ito-tui cancel run_123 --yes --reason 'wrong data'\n"
        "  ito-tui cancel run_123 --yes --if-running --json",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument("--reason", help="why (recorded with the cancellation)")
    p.add_argument("--yes", "-y", action="store_true", help="cancel without asking")
    p.add_argument(
        "--if-running",
        action="store_true",
        help="a run that already ended is not an error: exit 0 (like kubectl's --ignore-not-found)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help(
            "print the Run (as cancelled, or as it ended) as JSON; the restated spend and "
            "the prompt go to stderr",
            "Run",
        ),
    )
    p.set_defaults(handler=cmd_cancel)


def _register_watch(
    sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]
) -> None:
    p = sub.add_parser(
        "watch",
        parents=[common],
        formatter_class=fmt,
        help="follow a run's events; exit with its outcome",
        description="Follow a run's event stream until it ends (reconnecting as needed) and "
        "exit with its outcome: 0 completed, 3 failed gate, 4 failed, 5 cancelled. A failed "
        "gate prints each failing benchmark: value, threshold, by how much. Human lines "
        "start from the current snapshot; --json prints every event from the start (one "
        "JSON object per line) unless --since is given.",
        epilog="examples:\n  ito-tui watch run_123\n  ito-tui watch run_123 --json | jq .type\n"
        "  ito-tui watch run_123 --until proposal; [ $? = 12 ] && ito-tui proposals --pending\n"
        "  ito-tui watch run_123 --alert-command notify-send --alert-arg ito",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--json",
        action="store_true",
        help="one event envelope per line, as on the SSE stream: "
        "{seq, run_id, type, ts, sim_ts, stage, data} (payload schemas: ito-tui contract)",
    )
    p.add_argument("--since", metavar="SEQ", type=int, help="replay events after this seq")
    p.add_argument(
        "--until",
        choices=UNTIL_CHOICES,
        default="end",
        help="stop when this happens, exit 12: proposal (one waits for a person; at once if "
        "one already does), gate (the next gate passes; a failed gate exits 3); "
        "end (default): when the run ends, with its outcome",
    )
    g = p.add_argument_group(
        "alerts",
        "Run a command once per alert of the events watched (a proposal, a failed gate, a "
        "budget warning, an SLO breach, a failed node, a straggler, the run's end), with "
        "the alert as JSON on stdin: an argv, never a shell string. [alerts] "
        "command_timeout_s and [alerts.kinds] apply. An alert sent is remembered in the "
        "state dir and never sent again, so a unit restarting `watch RUN --since 0 "
        "--alert-command …` sends only what it missed. Waits for the command before exiting.",
    )
    g.add_argument("--alert-command", metavar="PROG", help="the program to run (see --alert-arg)")
    g.add_argument(
        "--alert-arg",
        metavar="ARG",
        action="append",
        help="one argument of the program (repeat for more, in order)",
    )
    g.add_argument(
        "--alerts",
        action="store_true",
        help="run the [alerts] command of the settings file (when --alert-command is absent)",
    )
    p.set_defaults(handler=cmd_watch)


def cmd_runs(ctx: Context) -> int:
    """List runs as a table or JSON."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.read")
            active = ctx.args.state == ACTIVE
            items = await client.runs(state=None if active else ctx.args.state)
            if active:
                items = [r for r in items if str(r.state) not in TERMINAL]
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
                    safe(r.model_size) if r.model_size else MISSING,
                    state_text(ctx.out, r.state),
                    stage_label(r.current_stage),
                    prog,
                    f"{usd(r.spend.usd_spent)} / {usd(r.spend.budget_usd)}",
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
        from .summary import fetch_run_end, render_summary

        async with ctx.client() as client:
            run = await client.run(ctx.args.run)
            end = await fetch_run_end(client, run, ctx.out)
        if ctx.args.json:
            from ito_tui.state.summary_text import summary_json

            doc = to_jsonable(run)
            doc["summary"] = None if end is None else summary_json(end)
            ctx.out.json(doc)
        else:
            render_run(ctx.out, run)
            if end is not None:
                render_summary(ctx.out, end)
        return 0

    return ctx.run(body)


def cmd_checkpoints(ctx: Context) -> int:
    """List one run's checkpoints, oldest first."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.read")
            items = await client.checkpoints(ctx.args.run)
        if ctx.args.json:
            ctx.out.json(items)
            return 0
        if not items:
            ctx.out.info(f"no checkpoints for {safe(ctx.args.run)} yet")
            return 0
        rows = [
            [
                safe(c.checkpoint_id),
                f"{c.created_at:%Y-%m-%d %H:%M:%S}",
                stage_label(c.stage),
                integer(c.step),
                fixed(c.size_gb, 0, grouping=True),
                fixed(c.blocking_s, 1),
                fixed(c.persist_s, 0),
                fixed(c.size_gb / c.persist_s, 1) if c.persist_s > 0 else MISSING,
            ]
            for c in items
        ]
        headers = ("checkpoint", "saved UTC", "stage", "step", "GB", "blocking s", "persist s",
                   "GB/s")  # fmt: skip
        ctx.out.table(headers, rows)
        return 0

    return ctx.run(body)


def cmd_watch(ctx: Context) -> int:
    """Follow a run until it ends (or `--until` happens); exit with its outcome."""
    from .follow import follow

    async def body() -> int:
        sink = None
        if ctx.args.alert_command is not None or ctx.args.alert_arg or ctx.args.alerts:
            from .alerts import alert_sink  # only now: a plain watch loads no alerting

            sink = alert_sink(ctx)
        async with ctx.client() as client:
            since = ctx.args.since
            if since is None and ctx.args.json:
                since = 0
            try:
                return await follow(
                    ctx,
                    client,
                    ctx.args.run,
                    as_json=ctx.args.json,
                    since_seq=since,
                    until=ctx.args.until,
                    alerts=sink,
                )
            finally:
                if sink is not None:
                    await sink.close()

    return ctx.run(body)


def cmd_cancel(ctx: Context) -> int:
    """Restate spend, confirm, cancel with an Idempotency-Key."""
    from ito_tui.client.errors import Conflict

    as_json: bool = ctx.args.json
    # With --json stdout carries the Run only; what a person reads goes to stderr.
    say = ctx.out.info if as_json else ctx.out.line

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.cancel")
            run = await client.run(ctx.args.run)
            if run.terminal:
                return _already_ended(ctx, run)
            say(
                f"run {safe(run.run_id)} ({state_text(ctx.out, run.state)}, stage "
                f"{stage_label(run.current_stage)}) on booking {safe(run.booking_id)}"
            )
            say(f"  {spend_text(run)}")
            say("  cancelling stops training; what was spent stays spent")
            if not ctx.args.yes:
                if not interactive():
                    raise CommandError(
                        "not cancelled: confirmation needed; pass --yes without a terminal",
                        ExitCode.USAGE,
                    )
                if not confirm(ctx.out, f"Cancel {safe(run.run_id)}?", word="cancel"):
                    ctx.out.info("not cancelled")
                    return 0
            try:
                after = await client.cancel_run(
                    run.run_id, reason=ctx.args.reason, idempotency_key=str(uuid.uuid4())
                )
            except Conflict as exc:
                if exc.code != "run.terminal":
                    raise
                # It ended between the read and the cancel: the same as ended before.
                return _already_ended(ctx, await client.run(run.run_id))
            if as_json:
                ctx.out.json(after)
            else:
                say(f"run {safe(after.run_id)} is {state_text(ctx.out, after.state)}")
            return 0

    return ctx.run(body)


def _already_ended(ctx: Context, run: Run) -> int:
    """A run that ended needs no cancel: refused (9), or done (0) with --if-running."""
    text = f"run {safe(run.run_id)} already ended ({safe(run.state)}); nothing to cancel"
    if not ctx.args.if_running:
        raise CommandError(text, ExitCode.REFUSED)
    ctx.out.info(text)
    if ctx.args.json:
        ctx.out.json(run)
    return 0
