"""`login`, `logout`, `whoami`: the token lives in the OS keyring, never in argv.

`login` reads the token with a no-echo prompt on a terminal, or exactly one
line of stdin otherwise; there is deliberately no flag that takes a token.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from .context import CommandError, Context
from .exitcodes import ExitCode
from .output import read_secret_line, safe, schema_help


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add login, logout and whoami to the subcommands."""
    p = sub.add_parser(
        "login",
        parents=[common],
        formatter_class=fmt,
        help="store a token for the backend in the OS keyring",
        description="Read a token (no-echo prompt on a terminal, or one line of stdin), "
        "verify it with the backend and store it in the OS keyring. A token is never "
        "accepted as an argument.",
        epilog="examples:\n  ito-tui --backend https://ito.example login\n"
        "  pass show ito | ito-tui login",
    )
    p.set_defaults(handler=cmd_login)

    p = sub.add_parser(
        "logout",
        parents=[common],
        formatter_class=fmt,
        help="delete the stored token for the backend",
        description="Delete this backend's token from the OS keyring.",
        epilog="examples:\n  ito-tui logout",
    )
    p.set_defaults(handler=cmd_logout)

    p = sub.add_parser(
        "whoami",
        parents=[common],
        formatter_class=fmt,
        help="print the operator the backend knows you as",
        description="Ask the backend who the stored token (or ITO_TOKEN) belongs to.",
        epilog="examples:\n  ito-tui whoami\n  ito-tui whoami --json",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print {operator, backend_url, mode} as JSON", "WhoAmI"),
    )
    p.set_defaults(handler=cmd_whoami)


def cmd_login(ctx: Context) -> int:
    """Read, verify and store a token."""
    from pydantic import SecretStr

    from ito_tui import auth

    try:
        url = ctx.backend_url
    except CommandError as exc:
        ctx.out.error(str(exc))
        return int(exc.code)
    # Say "no keyring" before the operator types a token that could not be kept.
    problem = auth.keyring_problem()
    if problem is not None:
        ctx.out.error(safe(auth.KeyringUnavailable(problem)))
        return int(ExitCode.AUTH)
    try:
        raw = read_secret_line(f"Token for {url}: ").strip()
    except EOFError:
        raw = ""
    if not raw:
        ctx.out.error("no token given (type it at the prompt or pipe one line to stdin)")
        return int(ExitCode.AUTH)
    token = SecretStr(raw)
    del raw

    async def body() -> int:
        async with ctx.client(token) as client:
            who = await client.whoami()
        try:
            auth.store_token(url, token)
        except auth.KeyringUnavailable as exc:
            raise CommandError(safe(exc), ExitCode.AUTH) from None
        except ValueError as exc:  # the message describes the shape, never the token
            raise CommandError(f"token not stored: {safe(exc)}", ExitCode.AUTH) from None
        ctx.out.line(f"logged in to {safe(url)} as {ctx.out.style(safe(who.operator), 'bold')}")
        if os.environ.get("ITO_TOKEN"):
            ctx.out.warn("ITO_TOKEN is set in this environment and overrides the stored token")
        return 0

    return ctx.run(body)


def cmd_logout(ctx: Context) -> int:
    """Delete the stored token; saying so when there was none."""
    from ito_tui import auth

    try:
        url = ctx.backend_url
        deleted = auth.delete_token(url)
    except CommandError as exc:
        ctx.out.error(str(exc))
        return int(exc.code)
    except auth.KeyringUnavailable as exc:
        ctx.out.error(safe(exc))
        return int(ExitCode.AUTH)
    if deleted:
        ctx.out.line(f"logged out of {safe(url)}: token deleted from the keyring")
    else:
        ctx.out.line(f"no token was stored for {safe(url)}")
    if os.environ.get("ITO_TOKEN"):
        ctx.out.warn("ITO_TOKEN is still set in this environment; unset it to log out fully")
    return 0


def cmd_whoami(ctx: Context) -> int:
    """Print the operator for the current token."""

    async def body() -> int:
        async with ctx.client() as client:
            who = await client.whoami()
            caps = await client.capabilities()
        mode = str(caps.server.mode)
        if ctx.args.json:
            ctx.out.json({"operator": who.operator, "backend_url": ctx.backend_url, "mode": mode})
            return 0
        demo = "  " + ctx.out.style("DEMO (simulated backend)", "yellow") if caps.simulated else ""
        ctx.out.line(f"{safe(who.operator)}  @ {safe(ctx.backend_url)}{demo}")
        return 0

    return ctx.run(body)
