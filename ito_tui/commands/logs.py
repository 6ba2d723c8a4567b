"""`ito-tui logs RUN`: a run's job log, the last lines or followed to the run's end.

Without `--follow` it prints the last `--tail` lines that match the filters (200 by
default), oldest first, from the log's page endpoint (`log_page`, walked back from the
newest line), and exits 0. With `--follow` it prints those lines and then every new one
from the log stream (`client.logs`: resumed by seq across drops and backend restarts, no
line twice) until the run has ended and every line is written, then exits with the
run's outcome like `watch`: 0 completed, 3 failed gate, 4 failed, 5 cancelled.
`--since SEQ` starts after that seq instead (what to resume with after a lost stream).

Filters (`--rank`, `--level` minimum, `--source`, `--grep` case-insensitive substring)
are applied by the backend, to the lines already written and to new ones alike. A
backend without the `runs.logs` capability gets exit 6 and the capability's name, as
every command; lines lost to the backend's retention are said on stderr (stdout stays one
line per log line, or one LogLine per line with `--json`). Printing is in
`commands/logfmt.py`, which says why it is written for speed.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from .context import CommandError, Context
from .exitcodes import ExitCode, exit_for_outcome
from .ids import complete_ids
from .logfmt import LEVELS, SOURCES, LogPrinter
from .output import safe, schema_help

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState, ItoClient
    from ito_tui.contract import LogLine

DEFAULT_TAIL = 200
PAGE_LIMIT = 1000
"""Lines asked for per page (the backend may cap it lower; the walk goes on regardless)."""
FLUSH_LINES = 1000
"""While following, lines are written when the stream waits for more, or every this many."""


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `logs` to the subcommands."""
    p = sub.add_parser(
        "logs",
        parents=[common],
        formatter_class=fmt,
        help="a run's job log: the last lines, or follow it to the run's end",
        description="Print a run's job log, one line per log line: UTC time, rank (or node), "
        "level, source, text (escape codes and progress bars made inert). Without --follow: "
        "the last --tail lines (default 200), exit 0. With --follow: then every new line "
        "until the run ends, and exit with its outcome (0 completed, 3 failed gate, 4 "
        "failed, 5 cancelled). Filters are applied by the backend.",
        epilog="examples:\n  ito-tui logs run_123\n"
        "  ito-tui logs run_123 --follow --level warning\n"
        "  ito-tui logs run_123 --tail 5000 --source nccl --grep timeout\n"
        "  ito-tui logs run_123 --rank 0 --rank 8 --json | jq -r .text",
    )
    complete_ids(p.add_argument("run", metavar="RUN"), "runs")
    p.add_argument(
        "--follow", "-f", action="store_true", help="keep printing new lines until the run ends"
    )
    p.add_argument(
        "--tail",
        metavar="N",
        type=_count,
        help=f"the last N matching lines first (default {DEFAULT_TAIL}; 0: none)",
    )
    p.add_argument(
        "--since",
        metavar="SEQ",
        type=_count,
        help="with --follow: every line after this seq instead of --tail (resume)",
    )
    p.add_argument(
        "--rank",
        metavar="R",
        type=_count,
        action="append",
        default=[],
        help="only lines of this rank (repeat for more)",
    )
    p.add_argument("--level", choices=LEVELS, help="only lines of this level or more severe")
    p.add_argument(
        "--source",
        choices=SOURCES,
        action="append",
        default=[],
        help="only lines from this source (repeat for more)",
    )
    p.add_argument("--grep", metavar="TEXT", help="only lines containing TEXT (any case)")
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("one LogLine per line: {seq, ts, rank, node, level, source, text, cut, …}",
                         "LogLine"),
    )  # fmt: skip
    p.set_defaults(handler=cmd_logs)


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "ranks": tuple(args.rank),
        "level": args.level,
        "sources": tuple(args.source),
        "q": args.grep or None,
    }


def cmd_logs(ctx: Context) -> int:
    """Print the last lines of a run's log, or follow it to the run's end."""
    args = ctx.args
    if args.since is not None and not args.follow:
        ctx.out.error("--since needs --follow (without it, use --tail N)")
        return int(ExitCode.USAGE)
    printer = LogPrinter(ctx.out, as_json=args.json)

    async def body() -> int:
        async with ctx.client() as client:
            if args.follow:
                return await follow_logs(ctx, client, printer)
            await last_lines(ctx, client, printer)
            return 0

    return ctx.run(body)


async def last_lines(ctx: Context, client: ItoClient, printer: LogPrinter) -> None:
    """Print the last `--tail` matching lines, oldest first, walking pages back."""
    args = ctx.args
    wanted = DEFAULT_TAIL if args.tail is None else args.tail
    await client.require("runs.logs")
    # Each page becomes text at once (the models are dropped), printed newest page last.
    chunks: list[str] = []
    before: int | None = None
    while wanted > 0:
        page = await client.log_page(
            args.run, before_seq=before, limit=min(wanted, PAGE_LIMIT), **_filters(args)
        )
        items = page.items[-wanted:]
        if items:
            chunks.append(printer.text(items))
            wanted -= len(items)
        if page.next_before_seq is None or not page.items:
            break
        before = page.next_before_seq
    if not chunks and wanted > 0:
        matching = " matching the filters" if any(_filters(args).values()) else ""
        ctx.out.info(f"no log lines{matching} for {safe(args.run)} yet")
        return
    write = ctx.out.stdout.write
    for chunk in reversed(chunks):
        write(chunk)
    ctx.out.stdout.flush()


async def follow_logs(ctx: Context, client: ItoClient, printer: LogPrinter) -> int:
    """Print the tail, then every new line until the run ends; its outcome's exit code."""
    from ito_tui.client import ItoError
    from ito_tui.contract import LogTruncated
    from ito_tui.format import status_label
    from ito_tui.state import RunState

    args = ctx.args
    tail = None if args.since is not None else (DEFAULT_TAIL if args.tail is None else args.tail)
    notes = _ConnectionNotes(ctx)
    stream = await client.logs(
        args.run, tail=tail, since_seq=args.since, on_state=notes, **_filters(args)
    )
    batches = _Batches(ctx, printer)
    seen: int | None = args.since
    try:
        async for item in stream:
            if isinstance(item, LogTruncated):
                batches.flush()
                ctx.out.warn(
                    f"{item.dropped:,} older lines are gone (past the backend's retention)"
                )
                continue
            batches.add(item)
            seen = item.seq
    except ItoError:
        batches.flush()
        after = f" --since {seen}" if seen is not None else ""
        ctx.out.info(
            f"stopped following the log of {safe(args.run)}; the run goes on — "
            f"resume with: ito-tui logs {safe(args.run)} --follow{after}"
        )
        raise
    finally:
        await stream.aclose()
        notes.close()
        batches.flush()  # what came before a Ctrl-C is written too
    run = await client.run(args.run)
    if not run.terminal:
        raise CommandError(
            f"the log stream of {safe(args.run)} ended while the run is {safe(run.state)}; "
            f"resume with: ito-tui logs {safe(args.run)} --follow"
            + (f" --since {seen}" if seen is not None else ""),
            ExitCode.ERROR,
        )
    outcome = RunState.from_run(run).outcome
    ctx.out.info(f"run {safe(args.run)} ended: {status_label(outcome or run.state)}")
    return int(exit_for_outcome(outcome))


class _Batches:
    """Lines waiting to be written while following.

    They are written when the stream next waits for the network (a callback the loop runs
    then: a burst is one write, a quiet stream's line goes out at once), or every
    `FLUSH_LINES`. A write that fails in that callback (the reader went away: `| head`)
    is raised at the next line, where the command can stop on it."""

    def __init__(self, ctx: Context, printer: LogPrinter) -> None:
        self._out = ctx.out.stdout
        self._printer = printer
        self._pending: list[LogLine] = []
        self._scheduled = False
        self._failed: OSError | None = None

    def add(self, line: LogLine) -> None:
        if self._failed is not None:
            raise self._failed
        self._pending.append(line)
        if len(self._pending) >= FLUSH_LINES:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._soon)

    def _soon(self) -> None:
        try:
            self.flush()
        except OSError as exc:
            self._failed = exc

    def flush(self) -> None:
        self._scheduled = False
        if self._failed is not None:
            raise self._failed
        if self._pending:
            self._out.write(self._printer.text(self._pending))
            self._pending.clear()
        self._out.flush()


class _ConnectionNotes:
    """Connection changes on stderr (stdout stays the log): the first reconnect of an
    episode, then summaries (`Flaps`), never a line per reconnect.

    A reconnect is told only when it has not worked `GRACE_S` after its planned retry: the
    stream closes at the run's end and the client reconnects once more for any last lines
    (answered 204), and a blip it recovers from loses nothing (it resumes by seq); neither
    is worth a line that says the connection was lost."""

    GRACE_S = 2.0

    def __init__(self, ctx: Context) -> None:
        from ito_tui.client.connection import Flaps

        self._out = ctx.out
        self._flaps = Flaps()
        self._told = 0
        self._pending: asyncio.TimerHandle | None = None

    def __call__(self, state: ConnectionState) -> None:
        if state.status == "reconnecting" and state.reconnects > self._told:
            self._told = state.reconnects
            lines = self._flaps.reconnect(safe(state.error or "no reason given"), state.retry_in_s)
            if lines:
                self._cancel()
                wait = (state.retry_in_s or 0.0) + self.GRACE_S
                self._pending = asyncio.get_running_loop().call_later(wait, self._say, lines)
        elif state.status == "live":
            self._cancel()

    def _say(self, lines: list[str]) -> None:
        self._pending = None
        for line in lines:
            self._out.info(line)

    def _cancel(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def close(self) -> None:
        self._cancel()
        for line in self._flaps.close():
            self._out.info(line)
