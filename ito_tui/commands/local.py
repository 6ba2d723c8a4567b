"""Commands that run something locally: the TUI, the demo, the browser server, the simulator.

`tui`, `demo` and `serve` are registered here (the command line is parsed in one
place) but open a front end: their `frontend` default names it and `ito_tui/cli.py`,
the one layer above both `commands` and `tui`, opens it (the subcommands never import
the TUI: pyproject.toml's layers contract). The simulator (`backend`) is imported
lazily inside its handler, so the headless commands never load uvicorn or the
simulator. The simulator and the browser mode are optional extras of the package
(`demo`, `serve`): their commands check for them by name first (`require_extras`)
and, when one is missing, exit 2 with the command that installs it. `contract`
prints the OpenAPI document shipped in the package, so it needs neither.
"""

from __future__ import annotations

import argparse
import importlib.util
from importlib import resources
from typing import Any

from .context import CommandError, Context
from .exitcodes import ExitCode

SCENARIOS = (
    "showcase",
    "happy",
    "gate-fail",
    "loss-spike",
    "node-failure",
    "budget",
    "refused",
    "straggler",
    "hang",
    "log-flood",
)
"""`ito_tui.desk_sim.config.SCENARIOS` (the client may not import the simulator; a test
keeps them equal)."""

EXTRAS: dict[str, dict[str, str]] = {
    "demo": {"fastapi": "fastapi", "uvicorn": "uvicorn", "sse_starlette": "sse-starlette"},
    "serve": {"textual_serve": "textual-serve"},
}
"""Import name -> distribution of what each optional extra of pyproject.toml installs (a
test checks them against each other)."""

DEMO_SPEED = 3600.0
"""The demo's default `--speed` (`ito_tui.tui.demo.DEMO_SPEED`; a test keeps them equal:
the help cannot import the TUI to read it)."""

OPENAPI = ("contract", "openapi.json")
"""Where the package ships the contract's OpenAPI document (made by scripts/openapi.py)."""


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add tui, demo, serve, backend and contract to the subcommands."""
    p = sub.add_parser(
        "tui",
        parents=[common],
        formatter_class=fmt,
        help="open the TUI (the default without a subcommand)",
        description="Open the terminal UI on the configured backend.",
        epilog="examples:\n  ito-tui tui\n  ito-tui --backend https://ito.example tui --read-only",
    )
    p.add_argument("--read-only", action="store_true", help="browse only: no submit or decisions")
    p.set_defaults(frontend="tui")

    p = sub.add_parser(
        "demo",
        parents=[common],
        formatter_class=fmt,
        help="the TUI on a built-in simulated backend (DEMO)",
        description="Start the simulated backend as a child process and open the TUI on it. "
        "Every screen says DEMO.",
        epilog="examples:\n  ito-tui demo\n  ito-tui demo --scenario gate-fail --speed 600\n"
        "  ito-tui demo --read-only",
    )
    p.add_argument("--scenario", default="showcase", choices=SCENARIOS, help="default: showcase")
    p.add_argument(
        "--speed",
        type=float,
        default=None,
        help=f"simulated seconds per wall second (default: {DEMO_SPEED:g}, an hour a second)",
    )
    p.add_argument("--read-only", action="store_true", help="browse only: no submit or decisions")
    p.set_defaults(frontend="demo")

    p = sub.add_parser(
        "serve",
        parents=[common],
        formatter_class=fmt,
        help="serve the TUI to a browser (textual-serve)",
        description="Serve the TUI over HTTP for a browser: on the configured backend if one "
        "is set, else the demo. Binds loopback by default; textual-serve has no "
        "authentication of its own, so another interface needs --public.",
        epilog="examples:\n  ito-tui serve\n  ito-tui serve --port 8000",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument(
        "--public",
        action="store_true",
        help="allow binding a non-loopback interface (no authentication: anyone can connect)",
    )
    p.set_defaults(frontend="serve")

    p = sub.add_parser(
        "backend",
        add_help=False,
        help="run the simulated backend (desk_sim); `ito-tui backend --help` for its options",
        description="Run the simulated Itô backend (for demos and tests).",
    )
    p.set_defaults(handler=cmd_backend, passthrough=True)

    p = sub.add_parser(
        "contract",
        parents=[common],
        formatter_class=fmt,
        help="print the API contract as OpenAPI 3.1 JSON",
        description="Print the Itô training API v1 contract as an OpenAPI 3.1 document.",
        epilog="examples:\n  ito-tui contract > openapi.json",
    )
    p.set_defaults(handler=cmd_contract)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses the name: not usable either
        return False


def require_extras(command: str, *extras: str) -> None:
    """Raise a usage error naming the install command when `command` needs an extra that
    is not installed. Looked up by name only: nothing of the extra is imported here."""
    missing = {
        dist: extra
        for extra in extras
        for module, dist in EXTRAS[extra].items()
        if not _installed(module)
    }
    if not missing:
        return
    spec = f"ito-tui[{','.join(extras)}]"
    needed = list(dict.fromkeys(missing.values()))
    raise CommandError(
        f"`ito-tui {command}` needs the {' and '.join(needed)} extra{'s' * (len(needed) > 1)} "
        f"({', '.join(missing)} not installed): pip install '{spec}' "
        f"(with pipx: pipx install --force '{spec}'; with uv: uv tool install --force '{spec}')",
        ExitCode.USAGE,
    )


def cmd_backend(ctx: Context) -> int:
    """Run desk_sim with the remaining arguments; the default --db is the user data dir's."""
    try:
        require_extras("backend", "demo")
    except CommandError as exc:
        ctx.out.error(str(exc))
        return int(exc.code)
    argv = list(ctx.args.extra)
    if not any(a == "--db" or a.startswith("--db=") for a in argv) and not (
        {"-h", "--help"} & set(argv)
    ):
        from ito_tui.paths import sim_db_path

        argv = ["--db", str(sim_db_path()), *argv]
    from ito_tui import desk_sim

    try:
        result = desk_sim.main(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else int(ExitCode.USAGE)
    except KeyboardInterrupt:
        return 0
    return int(result or 0)


def openapi_text() -> str:
    """The contract's OpenAPI 3.1 document as shipped in the package (JSON text)."""
    return resources.files("ito_tui").joinpath(*OPENAPI).read_text(encoding="utf-8")


def cmd_contract(ctx: Context) -> int:
    """Print the OpenAPI document of the contract (package data: no simulator needed)."""
    ctx.out.stdout.write(openapi_text())
    ctx.out.stdout.flush()
    return 0
