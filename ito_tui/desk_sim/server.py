"""The `backend` command line: serve the simulated desk with uvicorn on loopback."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

import uvicorn

from .app import create_app
from .config import SCENARIOS, SimConfig
from .dblock import database_in_use
from .lifeline import is_open, set_parent_death_signal, watch_parent_pipe

DEMO_DIR_PREFIX = "ito-demo-"
"""`ito-tui demo`'s temporary directories (database, lock, log) start with this."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="ito-tui backend",
        description="Serve the simulated Itô desk backend (DEMO). Tokens come from "
        "ITO_SIM_TOKENS=operator:token,...",
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default loopback)")
    parser.add_argument("--port", type=int, default=8741, help="0 picks a free port")
    parser.add_argument("--db", type=Path, default=None, help="SQLite file (default: temporary)")
    parser.add_argument("--speed", type=float, default=60.0, help="sim seconds per wall second")
    parser.add_argument("--scenario", choices=SCENARIOS, default="showcase")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=("simulated", "scaffold"), default="simulated")
    parser.add_argument("--heartbeat", type=float, default=15.0, help="SSE keepalive seconds")
    parser.add_argument("--retention", type=int, default=100_000, help="events kept per run")
    parser.add_argument(
        "--log-retention", type=int, default=100_000, help="job log lines kept per run"
    )
    parser.add_argument(
        "--log-line-bytes", type=int, default=4096, help="job log lines are cut at this size"
    )
    parser.add_argument(
        "--approval-speed",
        type=float,
        default=240.0,
        help="clock speed while a proposal waits for a person (0: no slow-down)",
    )
    parser.add_argument(
        "--proposal-ttl",
        type=float,
        default=4 * 3600.0,
        help="simulated seconds before a pending proposal expires",
    )
    parser.add_argument(
        "--history",
        choices=SCENARIOS,
        default=None,
        help="start an empty store with one finished run of this scenario (the demo's "
        "previous run to compare with)",
    )
    parser.add_argument(
        "--parent-pipe",
        type=int,
        default=None,
        metavar="FD",
        help="stop when this inherited pipe reaches EOF (its writer, the parent, is gone); "
        "`ito-tui demo` passes it",
    )
    parser.add_argument(
        "--remove-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --parent-pipe: remove DIR (the demo's temporary directory, named "
        f"{DEMO_DIR_PREFIX}*) after a clean stop because the parent is gone",
    )
    args = parser.parse_args(argv)
    if args.speed <= 0 or args.heartbeat <= 0 or args.retention < 1:
        parser.error("--speed and --heartbeat must be > 0, --retention >= 1")
    if args.log_retention < 1 or args.log_line_bytes < 64:
        parser.error("--log-retention must be >= 1, --log-line-bytes >= 64")
    if args.parent_pipe is not None and not is_open(args.parent_pipe):
        parser.error(f"--parent-pipe {args.parent_pipe} is not an open file descriptor")
    if args.remove_dir is not None and (
        args.parent_pipe is None or not args.remove_dir.name.startswith(DEMO_DIR_PREFIX)
    ):
        # A guard, not a feature: this deletes a tree, so only the demo's own kind.
        parser.error(f"--remove-dir needs --parent-pipe and a {DEMO_DIR_PREFIX}* directory")
    return args


def config_from_args(args: argparse.Namespace) -> SimConfig:
    return SimConfig(
        db_path=args.db,
        speed=args.speed,
        scenario=args.scenario,
        seed=args.seed,
        mode=args.mode,
        tokens=SimConfig.tokens_from_env(),
        heartbeat_s=args.heartbeat,
        event_retention=args.retention,
        log_retention=args.log_retention,
        log_line_bytes=args.log_line_bytes,
        approval_speed=args.approval_speed or None,
        proposal_ttl_s=args.proposal_ttl,
        history=args.history,
    )


def url_of(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(server: uvicorn.Server, host: str, parent_pipe: int | None = None) -> bool:
    """Run uvicorn; print the listening line once it accepts connections.

    With `parent_pipe`, shut down once that pipe reaches EOF (see `lifeline`).
    Returns whether it ever listened (False: startup failed, e.g. the db is in use).
    """
    if parent_pipe is not None:
        watch_parent_pipe(parent_pipe, lambda: _parent_gone(server))
    task = asyncio.create_task(server.serve())
    # uvicorn has no "started" callback; poll its flag until it listens (or gives up).
    while not server.started and not task.done():  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    # No sockets: it already shut down (its parent died while it started); nothing to say.
    sockets = server.servers[0].sockets if server.started else ()
    if sockets:
        port = sockets[0].getsockname()[1]
        _announce(f"ito-tui backend listening on {url_of(host, port)}")
    await task
    return bool(server.started)


def _parent_gone(server: uvicorn.Server) -> None:
    """Runs on the pipe watcher's thread: ask uvicorn to stop (it polls the flag)."""
    _orphaned.set()
    print("ito-tui backend: the parent process is gone; stopping", file=sys.stderr, flush=True)
    server.should_exit = True


def _stop(server: uvicorn.Server) -> None:
    server.should_exit = True


_orphaned = threading.Event()
"""Set when the parent pipe reached EOF: the parent died (or stopped us) first."""


def _announce(line: str) -> None:
    """Print `line` to stdout; if nobody reads it any more, keep serving (output goes nowhere)."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        # The reader (a demo that died while we started) is gone; without this the
        # error, and again the flush at exit, would end us without a clean shutdown.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """`ito-tui backend ...` / `python -m ito_tui.desk_sim ...`."""
    args = parse_args(argv)
    config = config_from_args(args)
    if config.db_path is not None and database_in_use(config.db_path):
        print(f"ito-tui backend: {config.db_path} is in use by another simulator process; "
              "stop it or pass another --db", file=sys.stderr)  # fmt: skip
        return 2
    if not config.tokens:
        print(
            "warning: ITO_SIM_TOKENS is empty; every authenticated call will get 401",
            file=sys.stderr,
        )
    uv_config = uvicorn.Config(
        create_app(config),
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(uv_config)
    if args.parent_pipe is not None:
        # The death signal may come before uvicorn installs its handlers (a demo killed
        # while we start): stop the same way then, never by SIGTERM's default action.
        signal.signal(signal.SIGTERM, lambda _sig, _frame: _stop(server))
        set_parent_death_signal()
    listened = asyncio.run(serve(server, args.host, args.parent_pipe))
    if args.remove_dir is not None and _orphaned.is_set():
        # Nobody is left to remove the demo's directory (also when the parent died while
        # we started): we stopped cleanly, SQLite is closed, so we do. A stop that raised
        # never gets here, and the directory stays with its log to be read.
        shutil.rmtree(args.remove_dir, ignore_errors=True)
        return 0
    if not listened:
        print("ito-tui backend: could not start (see the error above)", file=sys.stderr)
        return 1
    return 0
