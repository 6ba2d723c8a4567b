"""`ito-tui completion SHELL`: a completion script for bash, zsh, tcsh or fish, from the parser.

shtab writes the script from the whole command line (commands/parser.py): every
subcommand, option and choice. Arguments marked with `ids.complete_ids` complete
to ids from the configured backend; the script asks `ito-tui completion SHELL
--ids KIND` for them on each Tab, which prints one id per line and, whatever goes
wrong (no backend, no token, a slow keyring), nothing, within IDS_DEADLINE_S
(`ITO_COMPLETION_DEADLINE_S` sets another, for a slow link: `ids_deadline_s`).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

from .context import Context
from .ids import KINDS

SHELLS = ("bash", "zsh", "tcsh", "fish")

ZSH_EVAL_ONLY = "if [[ $zsh_eval_context[-1] == eval ]]; then"
ZSH_UNLESS_AUTOLOADED = "if [[ $zsh_eval_context[-1] != loadautofunc ]]; then"
"""shtab's zsh script registers itself only when eval'ed and otherwise runs as the
completion function: `source <(ito-tui completion zsh)` (context `file`) then ran it
outside completion. Run it only when autoloaded from $fpath; register otherwise."""

IDS_DEADLINE_S = 1.0
"""A Tab waits at most this long for the keyring and the backend (after the imports, which
take no I/O and are bounded anyway)."""
DEADLINE_ENV = "ITO_COMPLETION_DEADLINE_S"
DEADLINE_RANGE_S = (0.1, 30.0)


def ids_deadline_s(environ: Mapping[str, str] | None = None) -> float:
    """The id lookup's deadline: `ITO_COMPLETION_DEADLINE_S` (of `environ`, default the
    process's) in seconds when it is a number, clamped to 0.1–30 s (a Tab never hangs);
    else `IDS_DEADLINE_S`."""
    env = os.environ if environ is None else environ
    try:
        value = float(env.get(DEADLINE_ENV, ""))
    except ValueError:
        return IDS_DEADLINE_S
    if not math.isfinite(value):
        return IDS_DEADLINE_S
    lo, hi = DEADLINE_RANGE_S
    return min(max(value, lo), hi)


SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""The ids printed for a shell. bash's `compgen -W` expands each word it is given
(`$(…)` included), so an id from the backend with any other character is left out."""


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `completion` to the subcommands."""
    p = sub.add_parser(
        "completion",
        formatter_class=fmt,
        help="print a shell completion script (bash, zsh, tcsh or fish)",
        description="Print a completion script for bash, zsh, tcsh or fish. It completes "
        "subcommands, options and their choices, and run, booking and proposal ids from "
        "the configured backend (settings or ITO_BACKEND_URL; silent when it is not "
        "reachable within a second).",
        epilog="examples:\n  source <(ito-tui completion bash)\n"
        "  ito-tui completion zsh > ~/.zfunc/_ito-tui\n"
        "  ito-tui completion fish > ~/.config/fish/completions/ito-tui.fish\n"
        "  ito-tui completion tcsh > ~/.ito-tui.tcsh  # then: source ~/.ito-tui.tcsh",
    )
    p.add_argument("shell", choices=SHELLS)
    # What the scripts call on Tab; not for people.
    p.add_argument("--ids", choices=KINDS, help=argparse.SUPPRESS)
    p.set_defaults(handler=cmd_completion)


def cmd_completion(ctx: Context) -> int:
    """Print the completion script for the requested shell, or the ids it asks for."""
    if ctx.args.ids:
        return print_ids(ctx, ctx.args.ids)
    import shtab

    from .parser import build_parser

    script = shtab.complete(build_parser(), shell=ctx.args.shell, root_prefix="ito_tui")
    if ctx.args.shell == "zsh":
        script = script.replace(ZSH_EVAL_ONLY, ZSH_UNLESS_AUTOLOADED)
    ctx.out.stdout.write(script if script.endswith("\n") else script + "\n")
    ctx.out.stdout.flush()
    return 0


def print_ids(ctx: Context, kind: str) -> int:
    """Print the ids of `kind`, one a line; nothing at all on any failure or past the
    deadline. Always exit 0: a shell shows a completion's failure as noise."""
    found: list[str] = []
    deadline = ids_deadline_s()
    try:
        settings = ctx.settings
        from ito_tui.client import ItoClient, RetryPolicy
    except Exception:  # a bad settings file, a broken install: no candidates, no noise
        return 0

    async def ids() -> list[str]:
        async with ItoClient(
            ctx.backend_url,
            token=ctx.token(),
            insecure_http=bool(settings.insecure_http),
            ca_bundle=settings.ca_bundle,
            timeout=deadline,
            retry=RetryPolicy(max_attempts=1),
        ) as client:
            if kind == "bookings":
                return [b.booking_id for b in await client.bookings(status="completed")]
            runs = await client.runs()
            if kind == "runs":
                return [r.run_id for r in runs]
            return [p for r in runs for p in r.pending_proposal_ids]

    def look_up() -> None:
        try:
            answer = asyncio.run(ids())
        except BaseException:  # completion is silent by contract: no candidates, no noise
            return
        found.extend(i for i in answer if SAFE_ID.fullmatch(i))

    # A thread, so that a keyring blocked on D-Bus cannot hold the Tab either; a daemon,
    # so that one still waiting does not keep the process alive.
    worker = threading.Thread(target=look_up, daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        return 0
    if found:
        ctx.out.stdout.write("".join(f"{i}\n" for i in found))
        ctx.out.stdout.flush()
    return 0
