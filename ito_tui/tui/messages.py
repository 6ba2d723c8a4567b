"""The messages screens send the app (and the app the screens): every one that crosses a
screen, in one place, so a newcomer finds what the app reacts to without reading each screen.

Messages private to one widget (a stage list's selection, a list's refresh) stay with it.
They are top-level classes, so their handlers are `on_<message>` (`on_booking_chosen`);
the app handles them with `@on(...)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from ito_tui.alerting.needs import NeedsYou
    from ito_tui.contract import Booking, Capabilities, Run


@dataclass
class Connected(Message):
    """The backend answered and accepted the token (the connection step's outcome)."""

    capabilities: Capabilities
    operator: str
    active_runs: int


@dataclass
class LoginNeeded(Message):
    """The backend answered but has no valid token for us (401)."""

    capabilities: Capabilities
    reason: str
    keyring_problem: str | None = None


@dataclass
class BookingChosen(Message):
    """A completed, idle booking was chosen for a new run (the booking picker)."""

    booking: Booking


@dataclass
class RunChosen(Message):
    """The run holding a busy booking was chosen, to watch it (the booking picker)."""

    run_id: str


@dataclass
class RunSubmitted(Message):
    """The backend accepted the spec form's run (202)."""

    run: Run


@dataclass
class NeedsYouChanged(Message):
    """What waits for the operator changed (also once a second while something is
    pending, for the countdown). Posted to the screen on top."""

    needs_you: NeedsYou


class WorkerFailed(Message):
    """A screen's worker raised an error the screen did not handle; bubbles to the app's
    error sink (`tui/errors.py`)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class Reconnected(Message):
    """The app connected again in place (ctrl+l): posted to every screen of the stack,
    each of which follows or fetches again what it shows (the run screen its stream)."""


@dataclass
class OpenLogsAt(Message):
    """Open the run's Logs tab at `when` (a fault's or a gate result's time), follow off;
    posted from the timeline, the event log or an event's detail, bubbling to the run
    screen. `label` names what was opened ("fault f_12 node-3 failed") for the caption."""

    when: datetime
    label: str = ""
