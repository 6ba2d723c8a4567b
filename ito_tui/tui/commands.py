"""Command palette: every action of the current screen, and any booking or run by id."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.screen import Screen

from ito_tui.tui.format import safe
from ito_tui.tui.session import Shell

if TYPE_CHECKING:
    from ito_tui.contract import Booking, RunSummary


class Navigator(Shell, Protocol):
    """The app's navigation, as the palette uses it."""

    def show_booking(self, booking_id: str | None) -> None: ...

    def show_run(self, run_id: str) -> None: ...

    def show_decisions(self) -> None: ...


def binding_commands(screen: Screen[object], skip: object) -> Iterable[SystemCommand]:
    """A palette command for each enabled binding of ito-tui's on `screen` (not `skip`'s own).

    Ours all have an id (a test checks it); the ones Textual's widgets bring (a table's
    "Cursor down", the screen's "Copy selected text") have none and are left out: they
    are keys to press where they act, not commands to look up.
    """
    seen: set[tuple[int, str]] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if (
            not active.enabled
            or not binding.id
            or not binding.description
            or binding.system
            or active.node is skip
            or (id(active.node), binding.action) in seen
        ):
            continue
        seen.add((id(active.node), binding.action))
        yield SystemCommand(
            binding.description,
            binding.tooltip or binding.description,
            partial(screen.run_action, binding.action),
        )


def _booking_line(booking: Booking) -> str:
    return (
        f"Booking {safe(booking.booking_id)} · {safe(booking.gpu_sku)} "
        f"{booking.node_count}×{booking.gpus_per_node} · {safe(booking.status)}"
    )


def run_line(run: RunSummary) -> str:
    """A run as the palette lists it; one that waits for a decision says so."""
    stage = f" · {safe(run.current_stage)}" if run.current_stage else ""
    line = f"Run {safe(run.run_id)} · {safe(run.state)}{stage} · {safe(run.booking_id)}"
    if run.pending_proposal_ids:
        line += " · NEEDS APPROVAL"
    return line


class ItoCommands(Provider):
    """Bookings and runs fetched once when the palette opens, searchable by id."""

    async def startup(self) -> None:
        from ito_tui.client import ItoError

        self._entries: list[tuple[str, Callable[[], None]]] = []
        app = cast("Navigator", self.app)
        caps = app.session.capabilities
        if caps is None:
            return
        try:
            if caps.has("bookings.read"):
                for booking in await app.client.bookings():
                    self._entries.append(
                        (_booking_line(booking), partial(app.show_booking, booking.booking_id))
                    )
            if caps.has("runs.read"):
                for run in await app.client.runs():
                    self._entries.append((run_line(run), partial(app.show_run, run.run_id)))
        except ItoError:
            # The palette still offers every action; the screens report backend errors.
            return

    async def discover(self) -> Hits:
        for text, command in self._entries:
            yield DiscoveryHit(Content(text), command, text=text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, command in self._entries:
            score = matcher.match(text)
            if score > 0:
                # Content(text), not markup: ids and states come from the backend.
                yield Hit(score, Content(text), command, text=text)
