"""The `ito-tui` command line: global options, and each subcommand from the module that
registers it (only the ones a command line needs, so parsing stays cheap)."""

from __future__ import annotations

import argparse
import importlib
import textwrap
from collections.abc import Sequence

from ito_tui import __version__

from .exitcodes import EXIT_CODES_EPILOG

DESCRIPTION = """\
A terminal run manager for training runs on completed Itô GPU bookings.
Without a subcommand it opens the TUI. ito-tui never books, reserves or buys
anything: it needs a completed booking from ito-compute."""

EXAMPLES = """\
examples:
  ito-tui                                   open the TUI on the configured backend
  ito-tui demo                              the TUI on a built-in simulated backend
  echo "$TOKEN" | ito-tui --backend https://ito.example login
  ito-tui bookings
  ito-tui train --booking bk_123 --model-size 8B --data catalog://fineweb-edu@1.3 \\
      --target general --budget-usd 30000 --post-training dpo --yes --watch
  ito-tui runs --json

environment:
  ITO_BACKEND_URL   backend URL (the --backend flag wins)
  ITO_TOKEN         token for this session; overrides the keyring (never pass it as a flag)
  ITO_CONFIG_FILE   settings file (default: config.toml in the user config dir)
  NO_COLOR / FORCE_COLOR   turn colour off / on
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Wraps prose paragraphs; keeps indented blocks (examples, tables) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for para in text.split("\n\n"):
            lines = para.splitlines()
            if any(line.startswith(" ") for line in lines) or para.rstrip().endswith(":"):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(
                    textwrap.fill(
                        " ".join(lines), width, initial_indent=indent, subsequent_indent=indent
                    )
                )
        return "\n\n".join(paragraphs)


COMMAND_MODULES: dict[str, str] = {
    "login": "auth_cmds",
    "logout": "auth_cmds",
    "whoami": "auth_cmds",
    "bookings": "bookings",
    "estimate": "train",
    "train": "train",
    "runs": "runs",
    "status": "runs",
    "checkpoints": "runs",
    "watch": "runs",
    "cancel": "runs",
    "logs": "logs",
    "telemetry": "telemetry",
    "nodes": "nodes",
    "proposals": "proposals",
    "approve": "proposals",
    "reject": "proposals",
    "decisions": "decisions",
    "tui": "local",
    "demo": "local",
    "serve": "local",
    "backend": "local",
    "contract": "local",
    "check-backend": "check",
    "completion": "completion",
}
"""Which module of `ito_tui.commands` registers each subcommand, in `--help` order by
module (a test checks this against what the modules register)."""


def build_parser(*, commands: bool = True, only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line: global options and every subcommand (`commands=False`:
    the global options only, for a command line that opens the TUI; `only`: the global
    options and the subcommands of the module that registers that one)."""
    return _build(commands, only)[0]


def subcommand_parsers(only: str | None = None) -> dict[str, argparse.ArgumentParser]:
    """Each subcommand's parser by name, as `build_parser(only=only)` registers them."""
    return _build(True, only)[1]


def _build(
    commands: bool, only: str | None
) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="ito-tui",
        description=DESCRIPTION,
        epilog=EXAMPLES + "\n" + EXIT_CODES_EPILOG,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"ito-tui {__version__}")
    _add_globals(parser, default=None)
    # The same options after the subcommand (`ito-tui login --backend URL`); SUPPRESS keeps
    # a value given before the subcommand from being overwritten by the subparser default.
    common = argparse.ArgumentParser(add_help=False)
    _add_globals(common, default=argparse.SUPPRESS)

    if not commands:
        return parser, {}
    names = [COMMAND_MODULES[only]] if only else list(dict.fromkeys(COMMAND_MODULES.values()))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name in names:
        module = importlib.import_module(f"ito_tui.commands.{name}")
        module.register(sub, common, _Formatter)
    return parser, dict(sub.choices)


def subcommand(args: Sequence[str]) -> str | None:
    """What follows the global options in `args`: None when nothing does (`ito-tui`,
    `ito-tui --backend URL`: the TUI opens), the subcommand when it is one, else ""
    (`--help`, `--version`, a mistyped name: every subcommand is needed to answer).

    Parsing a known subcommand's line needs only its module (bench #2b: the other
    modules and their parsers cost ~9 ms of every command's start), and a line that
    opens the TUI none (bench #1)."""
    i = 0
    while i < len(args):
        if args[i] == "--insecure-http" or args[i].startswith("--backend="):
            i += 1
        elif args[i] == "--backend" and i + 1 < len(args) and not args[i + 1].startswith("-"):
            i += 2
        else:
            return args[i] if args[i] in COMMAND_MODULES else ""
    return None


def _add_globals(parser: argparse.ArgumentParser, default: object) -> None:
    group = parser.add_argument_group("global options")
    group.add_argument(
        "--backend",
        metavar="URL",
        default=default,
        help="backend URL (default: settings / ITO_BACKEND_URL, else http://127.0.0.1:8741)",
    )
    group.add_argument(
        "--insecure-http",
        action="store_true",
        default=default if default is not None else False,
        help="allow plain http:// to a non-loopback host (tokens travel unencrypted)",
    )
