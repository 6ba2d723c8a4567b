"""The `ito-tui` command: parse the command line (commands/parser.py) and dispatch.

`main(argv)` is the console-script entry point. The TUI, the browser demo and
the simulated backend are imported lazily inside their branches, so the
headless commands (and `--help`) never load textual, and load httpx only when
they talk to a backend.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from ito_tui import startup
from ito_tui.commands import local
from ito_tui.commands.context import Context
from ito_tui.commands.exitcodes import ExitCode
from ito_tui.commands.output import Output
from ito_tui.commands.parser import COMMAND_MODULES, build_parser, subcommand

__all__ = ["COMMAND_MODULES", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ito-tui` with `argv` (default: sys.argv[1:]); returns the exit code."""
    startup.pause()  # no cyclic collection while the command loads (see ito_tui/startup.py)
    startup.no_pydantic_plugins()
    try:
        return _main(argv)
    finally:
        startup.resume()


def _main(argv: Sequence[str] | None) -> int:
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
        args.command = "tui"
        args.handler = local.cmd_tui
        args.read_only = False
    ctx = Context(args, Output())
    try:
        return int(args.handler(ctx))
    except KeyboardInterrupt:  # Ctrl-C at a prompt: stop quietly, as shells expect
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`ito-tui contract | head`): stop quietly
        # Python's recipe: point stdout at /dev/null so the flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
