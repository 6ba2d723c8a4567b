"""`bookings`: the completed GPU bookings (from ito-compute) a run can use."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ito_tui.describe import booking_state
from ito_tui.format import ends_in, general, integer, starts_in, usd

from .context import Context
from .output import safe, schema_help

if TYPE_CHECKING:
    from ito_tui.contract import Booking

NO_BOOKING_HINT = (
    "a completed booking from ito-compute is needed first; "
    "ito-tui never books, reserves or buys anything"
)


def register(sub: Any, common: argparse.ArgumentParser, fmt: type[argparse.HelpFormatter]) -> None:
    """Add `bookings` to the subcommands."""
    p = sub.add_parser(
        "bookings",
        parents=[common],
        formatter_class=fmt,
        help="list completed GPU bookings",
        description="List the GPU bookings made by ito-compute. Only completed bookings can "
        "take a run; --all shows the others too.",
        epilog="examples:\n  ito-tui bookings\n  ito-tui bookings --all --json",
    )
    p.add_argument("--all", action="store_true", help="include pending, expired and cancelled")
    p.add_argument(
        "--json",
        action="store_true",
        help=schema_help("print a JSON array of Booking", "Booking"),
    )
    p.set_defaults(handler=cmd_bookings)


def window(b: Booking, now: datetime | None = None) -> str:
    """`ends in 3d04h` for a live booking, else its status relative to now."""
    now = now or datetime.now(UTC)
    if b.ends_at <= now:
        return "ended"
    if b.starts_at > now:
        return starts_in(b.starts_at, now)
    return ends_in(b.ends_at, now)


def booking_row(b: Booking) -> list[str]:
    """One table row for a booking (all cells safe)."""
    fabric = f"{safe(b.fabric.kind)} {general(b.fabric.gbit_per_s_per_gpu, 6)} Gb/s"
    return [
        safe(b.booking_id),
        booking_state(b.status, b.active_run_id),
        safe(b.gpu_sku),
        f"{integer(b.node_count)} × {integer(b.gpus_per_node)}",
        fabric,
        window(b),
        usd(b.price_usd_per_gpu_hour),
    ]


HEADERS = ("booking", "status", "gpu", "nodes × gpus", "fabric", "window", "$/gpu-h")


def cmd_bookings(ctx: Context) -> int:
    """List bookings (completed only unless --all)."""

    async def body() -> int:
        async with ctx.client() as client:
            await client.require("bookings.read")
            items = await client.bookings(status=None if ctx.args.all else "completed")
        if ctx.args.json:
            ctx.out.json(items)
            return 0
        if not items:
            ctx.out.info(f"no {'' if ctx.args.all else 'completed '}bookings: {NO_BOOKING_HINT}")
            return 0
        ctx.out.table(HEADERS, (booking_row(b) for b in items))
        return 0

    return ctx.run(body)
