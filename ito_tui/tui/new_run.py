"""“New run from this spec” (`n` on the run screen and the runs list): the spec form opens
filled with a run's spec, on that run's booking if it is free, else after a booking picker.

Nothing is sent here: the form estimates and submits only after its own confirmation. The
screen that asks runs `open_from` in a worker (the run's spec and the bookings are read
through the app's client); a failure goes to the app's one error sink.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ito_tui.textsafe import safe
from ito_tui.tui.navigation import FLOW_CAPABILITIES
from ito_tui.tui.session import shell

if TYPE_CHECKING:
    from textual.screen import Screen

    from ito_tui.contract import Booking, TrainingSpecEcho

__all__ = ["new_run_from"]


def new_run_from(screen: Screen[None], run_id: str, spec: TrainingSpecEcho | None) -> None:
    """Open the form filled with `run_id`'s spec (read from the backend when `spec` is
    None, as on the runs list, whose rows carry none)."""
    app = screen.app
    if shell(screen).session.read_only:
        app.notify("Read-only mode: starting runs is disabled.", severity="warning")
        return
    errors = getattr(app, "errors", None)
    if errors is not None and not all(errors.has_capability(n) for n in FLOW_CAPABILITIES):
        return  # the missing capability is named on screen; no form opens
    screen.run_worker(
        _open(screen, run_id, spec), group="new-run", exclusive=True, exit_on_error=False
    )


async def _open(screen: Screen[None], run_id: str, spec: TrainingSpecEcho | None) -> None:
    from ito_tui.tui.forms import values_of
    from ito_tui.tui.screens.booking_choice import BookingChoice
    from ito_tui.tui.screens.spec_form import SpecFormScreen
    from ito_tui.tui.widgets.booking_detail import unavailable_reason

    client = shell(screen).client
    if spec is None:
        spec = (await client.run(run_id)).spec
    values = values_of(spec)
    bookings = await client.bookings(status="completed")
    app = screen.app
    own = next((b for b in bookings if b.booking_id == spec.booking_id), None)
    why = "not a completed booking any more" if own is None else unavailable_reason(own)
    if own is not None and why is None:
        app.push_screen(SpecFormScreen(own, values=values))
        return
    free = [b for b in bookings if unavailable_reason(b) is None]

    def picked(booking: Booking | None) -> None:
        if booking is not None:
            app.push_screen(SpecFormScreen(booking, values=values))

    reason = f"{safe(run_id)}'s booking {safe(spec.booking_id)} cannot take it: {why}."
    now = shell(screen).session.clock()
    app.push_screen(BookingChoice(free, reason, now=now), picked)
