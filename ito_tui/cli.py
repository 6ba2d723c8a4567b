"""The `ito-tui` command: parse the command line (commands/parser.py) and dispatch.

`main(argv)` is the console-script entry point. A headless subcommand runs its
handler (commands/); `tui` (the default), `demo` and `serve` open a front end, here:
this is the one layer above both `commands` and `tui`, which never import each other
(pyproject.toml's layers contract). The TUI, the browser demo and the simulated
backend are imported lazily inside their branches, so the headless commands (and
`--help`) never load textual, and load httpx only when they talk to a backend.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from collections.abc import Callable, Sequence

from ito_tui import startup
from ito_tui.commands import local
from ito_tui.commands.context import CommandError, Context
from ito_tui.commands.exitcodes import ExitCode
from ito_tui.commands.output import Output
from ito_tui.commands.parser import COMMAND_MODULES, build_parser, subcommand

__all__ = ["COMMAND_MODULES", "FRONTENDS", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ito-tui` with `argv` (default: sys.argv[1:]); returns the exit code."""
    startup.pause()  # no cyclic collection while the command loads (see ito_tui/startup.py)
    startup.no_pydantic_plugins()
    try:
        return dispatch(argv)
    finally:
        startup.resume()


def dispatch(argv: Sequence[str] | None) -> int:
    """Parse `argv` (default: sys.argv[1:]) and run what it names; `main` without the
    start-up pause of the cyclic collector."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    named = subcommand(args_list)
    parser = build_parser(commands=named is not None, only=named or None)
    try:
        args, extra = parser.parse_known_args(args_list)
    except SystemExit as exc:  # argparse: --help/--version (0) or a usage error (2)
        return int(exc.code) if isinstance(exc.code, int) else int(ExitCode.USAGE)
    if extra and not getattr(args, "passthrough", False):
        parser.print_usage(sys.stderr)
        print(f"ito-tui: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return int(ExitCode.USAGE)
    args.extra = extra
    if getattr(args, "command", None) is None:
        args.command = args.frontend = "tui"
        args.read_only = False
    frontend = getattr(args, "frontend", None)
    handler = FRONTENDS[frontend] if frontend else args.handler
    ctx = Context(args, Output())
    try:
        return int(handler(ctx))
    except KeyboardInterrupt:  # Ctrl-C at a prompt: stop quietly, as shells expect
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`ito-tui contract | head`): stop quietly
        # Python's recipe: point stdout at /dev/null so the flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def open_tui(ctx: Context) -> int:
    """Open the TUI on the configured backend (textual is imported only here)."""
    try:
        settings = ctx.settings
    except CommandError as exc:
        ctx.out.error(str(exc))
        return int(exc.code)
    from ito_tui.tui import run_tui

    return int(run_tui(settings, read_only=bool(getattr(ctx.args, "read_only", False))) or 0)


def open_demo(ctx: Context) -> int:
    """Open the TUI on a simulated backend child process."""
    try:
        local.require_extras("demo", "demo")
        settings = ctx.settings
    except CommandError as exc:
        ctx.out.error(str(exc))
        return int(exc.code)
    if ctx.args.read_only:
        settings = dataclasses.replace(settings, read_only=True)
    from ito_tui.tui.demo import run_demo

    return int(run_demo(ctx.args.scenario, ctx.args.speed, settings) or 0)


def open_serve(ctx: Context) -> int:
    """Serve the TUI to a browser (loopback unless --public)."""
    from ito_tui.tui.serve import backend_configured, run_serve

    try:
        settings = ctx.settings
        # Without a configured backend each browser session runs the demo.
        extras = ("serve",) if backend_configured(settings) else ("demo", "serve")
        local.require_extras("serve", *extras)
    except CommandError as exc:
        ctx.out.error(str(exc))
        return int(exc.code)
    port, host, public = ctx.args.port, ctx.args.host, ctx.args.public
    return int(run_serve(port, host, public=public, settings=settings) or 0)


FRONTENDS: dict[str, Callable[[Context], int]] = {
    "tui": open_tui,
    "demo": open_demo,
    "serve": open_serve,
}
"""What each `frontend` a subcommand names (commands/local.py) opens."""


if __name__ == "__main__":
    sys.exit(main())
