"""BookingDetail: one booking in full — nodes, health, SSH access, fabric, window, price."""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.format import ends_in, general, starts_in, usd
from ito_tui.textsafe import safe
from ito_tui.tui.session import utc_now

if TYPE_CHECKING:
    from ito_tui.contract import Booking

_REASONS = {
    "pending": "pending — the nodes are not handed over yet",
    "expired": "expired — the booking window has ended",
    "cancelled": "cancelled — the booking was cancelled",
}


def unavailable_reason(booking: Booking) -> str | None:
    """Why this booking cannot take a new run, or None if it can."""
    status = str(booking.status)
    if status in _REASONS:
        return _REASONS[status]
    if status != "completed":
        return f"{safe(status)} — not a completed booking"
    if booking.active_run_id:
        return f"busy — run {safe(booking.active_run_id)} is using it"
    return None


def ssh_command(booking: Booking) -> str | None:
    """The ssh command for the booking's head node (first node), or None without nodes."""
    if not booking.nodes:
        return None
    head = booking.nodes[0]
    parts = ["ssh"]
    if booking.ssh.port != 22:
        parts += ["-p", str(booking.ssh.port)]
    if booking.ssh.jump_host:
        parts += ["-J", booking.ssh.jump_host]
    parts.append(f"{booking.ssh.user}@{head.ip}")
    # Quoted so a hostile value cannot add a second command when pasted.
    return " ".join(shlex.quote(safe(part)) for part in parts)


def _field(label: str, *parts: str | tuple[str, str] | Content) -> Content:
    return Content.assemble((f"{label:<11}", "$text-muted"), *parts)


class BookingDetail(Widget):
    """Renders one Booking given to it; `now` freezes relative times in tests."""

    DEFAULT_CSS = """
    BookingDetail {
        height: auto;
        padding: 0 1;
    }
    """

    booking: reactive[Booking | None] = reactive(None, layout=True)
    now: reactive[datetime] = reactive(utc_now)

    def render(self) -> Content:
        booking = self.booking
        if booking is None:
            return Content.styled("No booking highlighted.", "$stale")
        return Content("\n").join(self._lines(booking))

    def _lines(self, b: Booking) -> list[Content]:
        reason = unavailable_reason(b)
        state = (
            Content.styled("ready for a run", "$gate-passed")
            if reason is None
            else Content.styled(reason, "$needs-human")
        )
        window = f"{b.starts_at:%Y-%m-%d %H:%M} → {b.ends_at:%Y-%m-%d %H:%M} UTC"
        when = (
            starts_in(b.starts_at, self.now)
            if b.starts_at > self.now
            else ends_in(b.ends_at, self.now)
        )
        nodes = "node" if b.node_count == 1 else "nodes"
        hourly = b.price_usd_per_gpu_hour * b.gpu_count
        lines = [
            Content.assemble((safe(b.booking_id), "bold"), " · ", state),
            _field(
                "GPUs",
                f"{safe(b.gpu_sku)} · {b.node_count} {nodes} × {b.gpus_per_node} = {b.gpu_count}",
            ),
            _field(
                "Fabric",
                f"{safe(b.fabric.kind)} · {general(b.fabric.gbit_per_s_per_gpu, 6)} Gbit/s/GPU",
            ),
            _field("Window", window),
            _field("", when),
            _field("Price", f"{usd(b.price_usd_per_gpu_hour)}/GPU-h ({usd(hourly)}/h in all)"),
            _field("Active run", safe(b.active_run_id) if b.active_run_id else "none"),
            Content.styled(f"Nodes ({len(b.nodes)})", "bold"),
        ]
        for index, node in enumerate(b.nodes):
            health = (
                ("✓ healthy  ", "$gate-passed") if node.healthy else ("✗ UNHEALTHY", "$gate-failed")
            )
            lines.append(
                Content.assemble(
                    "  ",
                    health,
                    f" {safe(node.hostname)}  {safe(node.ip)}",
                    (" (head)", "$text-muted") if index == 0 else "",
                )
            )
        lines += self._ssh_lines(b)
        return lines

    def _ssh_lines(self, b: Booking) -> list[Content]:
        ssh = b.ssh
        lines = [
            Content.styled("SSH", "bold"),
            _field("  user", f"{safe(ssh.user)} · port {ssh.port}"),
            _field("  jump", safe(ssh.jump_host) if ssh.jump_host else "none"),
        ]
        command = ssh_command(b)
        if command:
            lines.append(_field("  head", (command, "$accent"), ("  (c copies)", "$text-muted")))
        if ssh.host_key_fingerprints:
            lines.append(Content.styled(f"Host keys ({len(ssh.host_key_fingerprints)})", "bold"))
            lines.extend(Content(f"  {safe(fp)}") for fp in ssh.host_key_fingerprints)
        return lines
