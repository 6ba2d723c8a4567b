"""`ito-tui check-backend`: run the API.md contract against a live backend."""

from __future__ import annotations

import argparse
from typing import Any

from .context import Context
from .exitcodes import ExitCode
from .output import safe

STATUS_LABEL = {
    "pass": ("PASS", "green"),
    "fail": ("FAIL", "red"),
    "skip": ("skip", "dim"),
    "not_implemented": ("N/I", "yellow"),
}


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add check-backend to the subcommands."""
    p = sub.add_parser(
        "check-backend",
        parents=[common],
        formatter_class=fmt,
        help="check a backend against the Itô training API contract",
        description=(
            "Run the API.md contract against a live backend and print each check with "
            "its verdict: status codes, problem+json bodies, schemas, SSE framing and "
            "Last-Event-ID resume, idempotency, and 501 for capabilities the backend "
            "says are not wired. Read-only unless --allow-writes, which also submits "
            "one minimal run and cancels it at once (it decides nothing). "
            "Exit 0 when every check passed, 10 when one failed, 6 when all passed "
            "but capabilities are not implemented (they are named)."
        ),
        epilog=(
            "examples:\n  ito-tui check-backend\n"
            "  ito-tui check-backend https://ito.example.org --json\n"
            "  ito-tui check-backend http://127.0.0.1:8741 --allow-writes"
        ),
    )
    p.add_argument("url", nargs="?", metavar="URL", help="backend URL (default: --backend)")
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="also submit one minimal run (cancelled at once) to check idempotency",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_check_backend)


def cmd_check_backend(ctx: Context) -> int:
    """Check a backend; the exit code says whether it conforms."""
    args = ctx.args
    if args.url:
        args.backend = args.url

    async def body() -> int:
        from ito_tui.client.conformance_checks import check_backend

        settings = ctx.settings
        report = await check_backend(
            ctx.backend_url,
            ctx.token(),
            allow_writes=bool(args.allow_writes),
            insecure_http=bool(settings.insecure_http),
            ca_bundle=settings.ca_bundle,
        )
        data = report.to_json()
        if args.json:
            ctx.out.json(data)
        else:
            _print(ctx, data)
        if report.failures:
            return int(ExitCode.CONFORMANCE)
        if report.not_implemented:
            return int(ExitCode.NOT_IMPLEMENTED)
        return int(ExitCode.OK)

    return ctx.run(body)


def _print(ctx: Context, data: dict[str, Any]) -> None:
    out = ctx.out
    server = data.get("server") or {}
    out.line(
        f"backend {safe(data['backend'])}: {safe(server.get('name', '?'))} "
        f"{safe(server.get('version', '?'))} ({safe(server.get('mode', '?'))})"
    )
    if data["capabilities"]:
        out.line()
        out.table(
            ["capability", "status", "detail"],
            [
                [safe(c.get("name")), safe(c.get("status")), safe(c.get("detail") or "")]
                for c in data["capabilities"]
            ],
        )
    out.line()
    rows = []
    for check in data["checks"]:
        label, colour = STATUS_LABEL.get(check["status"], (check["status"], "dim"))
        rows.append([out.style(label, colour), safe(check["name"]), safe(check["detail"])])
    out.table(["result", "check", "detail"], rows)
    summary = data["summary"]
    out.line()
    out.line(
        f"{summary['pass']} checks passed, {summary['fail']} failed, {summary['skip']} skipped"
        + (
            f"; not implemented: {', '.join(safe(n) for n in data['not_implemented'])}"
            if data["not_implemented"]
            else ""
        )
    )
