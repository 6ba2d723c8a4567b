"""`ito-tui nodes RUN`: the run's fleet — quorum, replicas, and one row per node.

The table is `state.fleet.fleet_view`'s (the Nodes tab's words and order: worst first,
each node's state as glyph and word, step time against the fleet median, per-GPU
counters, Xid / ECC / NCCL counts). `--watch` prints it again every
`limits.fleet_refresh_s` (asking for the next snapshot only after the last one came
back) until the run ends, then exits with its outcome like `watch` (0 completed, 3
failed gate, 4 failed, 5 cancelled); Ctrl-C stops it (130). On a terminal each refresh
redraws the screen; in a pipe the tables follow one another. A refresh the backend does
not answer is said on stderr and tried again at the next one. `--json` prints the Fleet
(with `--watch`, one Fleet per line). A backend without `runs.fleet` gets exit 6.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from .context import Context
from .exitcodes import exit_for_outcome
from .ids import complete_ids
from .nodesfmt import render_fleet
from .output import safe, schema_help

if TYPE_CHECKING:
    from ito_tui.client import ItoClient
    from ito_tui.contract import Fleet

pause = asyncio.sleep
"""How `--watch` waits between refreshes (a test shortens it)."""

CLEAR = "\x1b[H\x1b[2J"
"""Cursor home and erase the screen: `--watch` on a terminal redraws in place."""


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `nodes` to the subcommands."""
    p = sub.add_parser(
        "nodes",
        parents=[common],
        formatter_class=fmt,
        help="a run's fleet: quorum, replicas, nodes worst first",
        description="Show a run's fleet as the Nodes tab does: the quorum (participants / "
        "min, age), each replica (state, step, heartbeat age) and each node worst first "
        "(state as glyph and word, step time p50/p99 against the fleet median, GPU util, "
        "memory, temperature and power, Xid, uncorrected ECC and NCCL timeout counts). "
        "--watch refreshes it until the run ends and exits with its outcome.",
        epilog="examples:\n  ito-tui nodes run_123\n  ito-tui nodes run_123 --watch\n"
        "  ito-tui nodes run_123 --json | jq '.nodes[] | select(.straggler) | .hostname'",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--watch",
        "-w",
        action="store_true",
        help="refresh every limits.fleet_refresh_s until the run ends; exit with its outcome",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print the Fleet as JSON (--watch: one Fleet per line)", "Fleet"),
    )
    p.set_defaults(handler=cmd_nodes)


def cmd_nodes(ctx: Context) -> int:
    """Print the run's fleet once, or keep refreshing it until the run ends."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("runs.fleet")
            if ctx.args.watch:
                return await watch_fleet(ctx, client)
            fleet = await client.fleet(ctx.args.run)
            if ctx.args.json:
                ctx.out.json(fleet)
            else:
                show(ctx, fleet)
            return 0

    return ctx.run(body)


def show(ctx: Context, fleet: Fleet) -> None:
    """The fleet as text on stdout."""
    render_fleet(ctx.out, ctx.args.run, fleet)


async def watch_fleet(ctx: Context, client: ItoClient) -> int:
    """Refresh every `limits.fleet_refresh_s` until the run ends; its outcome's exit code."""
    from ito_tui.client import BackendUnavailable, RateLimited
    from ito_tui.client.policy import fleet_refresh_s
    from ito_tui.format import status_label
    from ito_tui.state import RunState

    run_id = ctx.args.run
    every = fleet_refresh_s((await client.capabilities()).limits.fleet_refresh_s)
    redraw = not ctx.args.json and _is_terminal(ctx)
    first = True
    while True:
        try:
            fleet = await client.fleet(run_id)
            run = await client.run(run_id)
        except (BackendUnavailable, RateLimited) as exc:
            ctx.out.warn(f"fleet not refreshed: {safe(exc)}; trying again in {every:g} s")
        else:
            if ctx.args.json:
                ctx.out.json_line(fleet)
            else:
                if redraw:
                    ctx.out.stdout.write(CLEAR)
                elif not first:
                    ctx.out.line()
                show(ctx, fleet)
            first = False
            if run.terminal:
                outcome = RunState.from_run(run).outcome
                ctx.out.info(f"run {safe(run_id)} ended: {status_label(outcome or run.state)}")
                return int(exit_for_outcome(outcome))
        # The next request is armed only now, after the last one finished.
        await pause(every)


def _is_terminal(ctx: Context) -> bool:
    try:
        return bool(ctx.out.stdout.isatty())
    except (AttributeError, ValueError):
        return False
