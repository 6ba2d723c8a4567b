"""The app's navigation: where each key, palette command and screen message leads, and the
run screens it opens, imported on first use (they are not on the way to the first frame,
the booking picker's)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ito_tui.textsafe import safe

if TYPE_CHECKING:
    from textual.screen import Screen

    from ito_tui.contract import Booking, Run
    from ito_tui.tui.app import ItoApp


def run_screen(run_id: str, *, review_on_open: bool = True) -> Screen[None]:
    """The run's pipeline screen (`review_on_open`: its pending proposal's modal opens)."""
    from ito_tui.tui.screens.pipeline import PipelineScreen

    return PipelineScreen(run_id, review_on_open=review_on_open)


def runs_screen() -> Screen[None]:
    """The runs list."""
    from ito_tui.tui.screens.runs import RunsScreen

    return RunsScreen()


def is_runs_list(screen: object) -> bool:
    """Whether `screen` is the runs list; its module is not imported to find out (if it is
    not loaded yet, no runs list exists)."""
    module = sys.modules.get("ito_tui.tui.screens.runs")
    return module is not None and isinstance(screen, module.RunsScreen)


def shown_run(screen: object) -> str | None:
    """The run a pipeline screen shows (None for any other screen), found the same way."""
    module = sys.modules.get("ito_tui.tui.screens.pipeline")
    if module is not None and isinstance(screen, module.PipelineScreen):
        return str(screen.run_id)
    return None


MAIN_MODE = "main"
"""The mode whose stack has the booking picker at its base."""
START_MODE = "start"
"""The mode of a stack that starts on the runs list or a run (`ito-tui --start ...`)."""
FLOW_CAPABILITIES = ("runs.create", "estimates.create")
"""What picking a booking to train on needs from the backend."""


class Navigation:
    """Where the app's keys, the palette and the screens' messages lead: one screen stack
    with the booking picker at its base, or a start stack of its own (a run, the runs list).

    Every move checks what it needs first (connected, logged in, the capability), so a key
    pressed while connecting does nothing rather than open a screen that cannot load.
    """

    def __init__(self, app: ItoApp) -> None:
        self.app = app
        self.start_base: Screen[None] | None = None
        """The base of the start stack (the runs list or a run), when the app began there."""

    @property
    def ready(self) -> bool:
        """Connected and logged in: the screens that load from the backend can open."""
        session = self.app.session
        return session.capabilities is not None and session.operator is not None

    def start(self, start: str | None, active_runs: int) -> None:
        """After the first connection: stay on the picker (already up), or make a run or
        the runs list the base of a stack of its own (Esc there does not fall into the
        picker). `start` is "bookings", "runs", a booking id or a run id."""
        screen: Screen[None] | None = None
        if start and start.startswith("run_"):
            screen = run_screen(start)
        elif start != "bookings" and (active_runs or start == "runs"):
            screen = runs_screen()
        if screen is not None:
            base = self.start_base = screen
            self.app.add_mode(START_MODE, lambda: base)
            self.app.switch_mode(START_MODE)

    def back_to_base(self) -> None:
        """Back to the picker at the base of the main stack, closing what was above it."""
        app = self.app
        if app.current_mode != MAIN_MODE:
            app.switch_mode(MAIN_MODE)
            if self.start_base is not None and not is_runs_list(self.start_base):
                # A run's start stack cannot be gone back to (ctrl+r opens the runs list,
                # from which the run opens anew): close it, and the stream it still followed.
                app.remove_mode(START_MODE)
                self.start_base = None
        while len(app.screen_stack) > 1:
            app.pop_screen()

    def booking(self, booking_id: str | None) -> None:
        """Go to the booking picker (highlighting `booking_id`) — the base of the stack."""
        if not self.ready:
            return
        self.back_to_base()
        screen = self.app.screen
        if booking_id and is_bookings(screen):
            screen.highlight(booking_id)  # type: ignore[attr-defined]  # the picker's

    def runs(self) -> None:
        """Go to the runs list: the one the app started on, or a new one over the picker
        (Esc goes back to it). Whatever was open above either is closed, as ctrl+o does."""
        app = self.app
        if not self.ready:
            return
        if is_runs_list(self.start_base):
            if app.current_mode != START_MODE:
                app.switch_mode(START_MODE)
            while len(app.screen_stack) > 1:
                app.pop_screen()
            return
        if is_runs_list(app.screen):
            return
        self.back_to_base()
        app.push_screen(runs_screen())

    def run(self, run_id: str) -> None:
        """Open the run's pipeline screen over the current screen."""
        self.app.push_screen(run_screen(run_id))

    def decisions(self) -> None:
        """Open the Decisions screen (every proposal across runs) over the current screen."""
        if not self.ready or not self.app.errors.has_capability("proposals.read"):
            return
        from ito_tui.tui.screens.decisions import DecisionsScreen  # not on the first frame

        if not isinstance(self.app.screen, DecisionsScreen):
            self.app.push_screen(DecisionsScreen())

    def new_run(self, booking: Booking) -> None:
        """The spec form for a new run on `booking`, if the backend can take one."""
        if not all(self.app.errors.has_capability(name) for name in FLOW_CAPABILITIES):
            return
        # Imported when first needed: the form's widgets are not on the way to the first frame.
        from ito_tui.tui.screens.spec_form import SpecFormScreen

        self.app.push_screen(SpecFormScreen(booking))

    def submitted(self, run: Run) -> None:
        """The spec form's run was accepted: show it in place of the form."""
        self.app.notify(f"Run {safe(run.run_id)} submitted.", markup=False)
        self.app.switch_screen(run_screen(run.run_id))


def is_bookings(screen: object) -> bool:
    """Whether `screen` is the booking picker (always loaded: it is the first frame's)."""
    from ito_tui.tui.screens.bookings import BookingsScreen

    return isinstance(screen, BookingsScreen)
