"""Command palette: every action of the current screen, any booking or run by id, and
every proposal waiting for a decision on any run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.screen import Screen

from ito_tui.describe import booking_state, proposal_words
from ito_tui.format import duration, integer, stage_label, status_label
from ito_tui.textsafe import one_line, safe
from ito_tui.tui.session import Shell

if TYPE_CHECKING:
    from textual.app import App

    from ito_tui.contract import Booking, Proposal, RunSummary


class Navigator(Shell, Protocol):
    """The app's navigation, as the palette uses it."""

    def show_booking(self, booking_id: str | None) -> None: ...

    def show_run(self, run_id: str) -> None: ...

    def show_decisions(self) -> None: ...


ALSO_APP_COMMANDS = frozenset({"runs.decisions"})
"""Screen keys for what one of the app's own palette commands offers on every screen
("Decisions"): the palette lists it once."""


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
            or binding.id in ALSO_APP_COMMANDS
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
        f"{integer(booking.node_count)}×{integer(booking.gpus_per_node)} · "
        # Not the run's id: typing it in the palette finds the run, not its booking.
        f"{booking_state(booking.status, booking.active_run_id, run=False)}"
    )


def run_line(run: RunSummary) -> str:
    """A run as the palette lists it; one that waits for a decision says so."""
    stage = f" · {stage_label(run.current_stage)}" if run.current_stage else ""
    line = f"Run {safe(run.run_id)} · {status_label(run.state)}{stage} · {safe(run.booking_id)}"
    if run.pending_proposal_ids:
        line += " · NEEDS APPROVAL"
    return line


def proposal_line(proposal: Proposal, now: datetime) -> str:
    """A pending proposal as the palette lists it: id, run, kind, time left."""
    kind = one_line(proposal_words(proposal.kind).short)
    left = (proposal.expires_at - now).total_seconds()
    expiry = f"expires in {duration(left)}" if left > 0 else "expiring now"
    return (
        f"Proposal {one_line(proposal.proposal_id)} · {one_line(proposal.run_id)} · {kind} "
        f"· {expiry}"
    )


REVIEW_HELP = "Review it: its modal sends nothing until you decide there"


def review(app: App[object], proposal: Proposal) -> None:
    """Open `proposal`'s modal over whatever is on screen (its own run's pipeline, if that
    is below, keeps it up to date: the modal `shows` it)."""
    from ito_tui.tui.screens.proposal import review_modal  # not on the way to the first frame

    top = app.screen
    shows = getattr(top, "shows", None)
    if callable(shows) and shows(proposal.proposal_id):
        return  # its modal is up already
    app.push_screen(review_modal(proposal, cast("Navigator", app).session))


class ItoCommands(Provider):
    """Pending proposals, bookings and runs fetched once when the palette opens, searchable
    by id; one endpoint that fails leaves the others' entries."""

    async def startup(self) -> None:
        from ito_tui.client import AuthError, BackendUnavailable, ItoError, TransportPolicyError

        self._entries: list[tuple[str, Callable[[], None], str | None]] = []
        app = cast("Navigator", self.app)
        caps = app.session.capabilities
        if caps is None:
            return
        # What waits for a person first, nearest expiry first: the palette is a way to it.
        fetches: list[tuple[str, Callable[[Navigator], Awaitable[None]]]] = [
            ("proposals.read", self._proposals),
            ("bookings.read", self._bookings),
            ("runs.read", self._runs),
        ]
        for capability, fetch in fetches:
            if not caps.has(capability):
                continue
            try:
                await fetch(app)
            except (AuthError, BackendUnavailable, TransportPolicyError):
                return  # the session's problem: the next endpoint would fail alike
            except ItoError:
                # The palette still offers every action; the screens report backend errors.
                continue

    async def _proposals(self, app: Navigator) -> None:
        pending = await app.client.all_proposals(status="pending")
        now = app.session.clock()
        for proposal in sorted(pending, key=lambda p: (p.expires_at, p.proposal_id)):
            command = partial(review, self.app, proposal)
            self._entries.append((proposal_line(proposal, now), command, REVIEW_HELP))

    async def _bookings(self, app: Navigator) -> None:
        for booking in await app.client.bookings():
            command = partial(app.show_booking, booking.booking_id)
            self._entries.append((_booking_line(booking), command, None))

    async def _runs(self, app: Navigator) -> None:
        for run in await app.client.runs():
            self._entries.append((run_line(run), partial(app.show_run, run.run_id), None))

    async def discover(self) -> Hits:
        for text, command, help_text in self._entries:
            yield DiscoveryHit(Content(text), command, text=text, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, command, help_text in self._entries:
            score = matcher.match(text)
            if score > 0:
                # Content(text), not markup: ids and states come from the backend.
                yield Hit(score, Content(text), command, text=text, help=help_text)
