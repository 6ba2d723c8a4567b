"""Will the run finish in its booking and within its budget? The run screen's projection.

`RunProjection.paint` (called with the run strip's paint, so the strip, the stage list
and the header agree) asks the tracker for `RunTracker.projection` — p50/p90 of the
finish and final spend from the pace the run measured — against the booking's end and
the run's budget, and hands it to the stage list (the words under the current stage) and
the header (`⚠ p90 past booking end` as a badge that never gives way). A p90 that
crosses either line raises the `projection` alert (`alerting.model.ProjectionCrossing`)
through the app's alert router, once per line for the screen's life.

The booking's end is the one thing the run does not carry: it is read once per booking
id (`client.booking`); until then, or if it cannot be read, the projection is judged
against the budget only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ito_tui.alerting.model import ProjectionCrossing
from ito_tui.client.errors import ItoError
from ito_tui.tui.session import shell

if TYPE_CHECKING:
    from datetime import datetime

    from ito_tui.state.projection import Projection
    from ito_tui.tui.screens.pipeline import PipelineScreen

__all__ = ["RunProjection"]


class RunProjection:
    """The run screen's projection (see the module docstring)."""

    def __init__(self, screen: PipelineScreen) -> None:
        self.screen = screen
        self.booking_ends_at: datetime | None = None
        self.latest: Projection | None = None
        self._asked: str | None = None
        """The booking id whose end was asked for."""
        self._crossing = ProjectionCrossing()
        self._alerted: frozenset[str] = frozenset()
        """The crossings (`late`, `over`) this screen has alerted."""

    def paint(self) -> None:
        screen = self.screen
        tracker = screen.tracker
        state = tracker.state
        if state.booking_id and state.booking_id != self._asked:
            self._asked = state.booking_id
            screen.run_worker(
                self._read_booking(state.booking_id), group="run-booking", exit_on_error=False
            )
        proj = self.latest = tracker.projection(booking_ends_at=self.booking_ends_at)
        screen._stages.projection = proj
        screen._header.warning = proj.warning
        alert = self._crossing.check(state, proj)
        kinds = frozenset(k for k, on in (("late", proj.late), ("over", proj.over)) if on)
        alerter = screen.alerter
        if alert is not None and alerter is not None and not kinds <= self._alerted:
            # Once per kind for this screen: early in a run (and at a demo's speed) the
            # p90 swings across the line and back faster than any re-arming margin, and
            # each crossing was a toast (18 in ten seconds of the showcase at 10,000x).
            # The header's badge says it for as long as it holds.
            self._alerted |= kinds
            alerter.alert(alert)

    async def _read_booking(self, booking_id: str) -> None:
        try:
            booking = await shell(self.screen).client.booking(booking_id)
        except ItoError:
            return  # judged against the budget only; the run screen says nothing more
        self.booking_ends_at = booking.ends_at
        self.paint()
