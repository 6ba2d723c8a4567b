"""ItoApp: wires screens, themes, global keys, the command palette and the client's lifetime.

What it does is elsewhere: where keys lead in `tui/navigation.py`, what an unhandled error
shows in `tui/errors.py` (the sink), the messages it reacts to in `tui/messages.py`, the
watcher of every run in `tui/needs_you.py`, what Textual offers only privately in
`tui/textual_private/`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import constants, on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ito_tui import startup
from ito_tui.tui import layout
from ito_tui.tui.commands import ItoCommands, binding_commands
from ito_tui.tui.errors import ErrorSink, forward_failure
from ito_tui.tui.messages import (
    BookingChosen,
    Connected,
    LoginNeeded,
    Reconnected,
    RunChosen,
    RunSubmitted,
    WorkerFailed,
)
from ito_tui.tui.navigation import MAIN_MODE, Navigation, is_runs_list
from ito_tui.tui.needs_you import AppAlerts
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.session import Session, TokenCell
from ito_tui.tui.theming import ThemedApp
from ito_tui.tui.widgets.header import HeaderStrip

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.worker import Worker

    from ito_tui.alerting.needs import NeedsYou
    from ito_tui.client.protocol import ItoApi
    from ito_tui.config import Settings
    from ito_tui.tui.alerts import Alerter

log = logging.getLogger(__name__)
ClientFactory = Callable[[], "ItoApi"]


class ItoApp(ThemedApp[None]):
    """The ito-tui application. Build it with `make_app`."""

    TITLE = "ito"
    # The booking picker is the base of the one screen stack, painted at once while the
    # connection step runs in it. A mode, not Textual's default screen, so that a run or
    # the runs list can start as the base of a mode of its own and `back_to_base` can
    # switch back to this one.
    DEFAULT_MODE = MAIN_MODE
    # The picker's stylesheet is read with the app's: loading it when the first screen is
    # installed would re-parse every stylesheet once more before the first frame.
    CSS_PATH: ClassVar[list[str | PurePath]] = ["app.tcss", "screens/bookings.tcss"]
    # Size classes on every screen (`-narrow`…`-very-wide`, `-short`…`-very-tall`): the
    # stylesheets grow columns and charts with the terminal (tui/layout.py).
    HORIZONTAL_BREAKPOINTS = layout.HORIZONTAL_BREAKPOINTS
    VERTICAL_BREAKPOINTS = layout.VERTICAL_BREAKPOINTS
    COMMANDS = App.COMMANDS | {ItoCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1,question_mark", "help", "Help", id="app.help", tooltip="Keys of this screen"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Leave ito-tui", priority=True),
        Binding(
            "ctrl+o", "bookings", "Bookings", id="app.bookings", tooltip="Go to the booking picker"
        ),
        Binding("ctrl+r", "runs", "Runs", id="app.runs", tooltip="List every run on the backend"),
        Binding(
            "ctrl+n",
            "needs_you",
            "Most urgent",
            id="app.needs_you",
            tooltip="Open the proposal that expires first, in any run",
            show=False,  # the header's counter says when; the footer has no room at 80
        ),
        Binding(
            "ctrl+l",
            "reconnect",
            "Reconnect",
            id="app.reconnect",
            tooltip="Connect again; you stay on this screen",
            show=False,
        ),
    ]

    def __init__(
        self,
        settings: Settings,
        client: ItoApi | ClientFactory,
        session: Session,
        *,
        start: str | None = None,
    ) -> None:
        self.settings = settings
        self.session = session
        self.start = start
        self._client: ItoApi | None = None
        self._client_factory: ClientFactory | None = None
        self._reconnecting = False
        """A ctrl+l's connection step is under way (its `Connected` keeps the screens)."""
        self._connecting: Worker[None] | None = None
        """The worker of a ctrl+l's connection step (one at a time)."""
        self._connected_once = False
        """The first `Connected` came (it opens the start screen, if any)."""
        if hasattr(client, "capabilities"):
            self._client = cast("ItoApi", client)
        else:
            self._client_factory = client
        super().__init__(settings.theme)
        self.alerting = AppAlerts(self, settings, session)
        """The app's watcher of every run, its alert router and the "needs you" counter."""
        self.navigation = Navigation(self)
        """Where keys, the palette and the screens' messages lead."""
        self.errors = ErrorSink(self)
        """What the operator sees of an error no screen handled."""
        highlight = start if start and start.startswith("bk_") else None
        self.add_mode(MAIN_MODE, lambda: BookingsScreen(highlight=highlight))

    @property
    def client(self) -> ItoApi:
        """The one client of this app, created on first use (after the first paint)."""
        if self._client is None:
            assert self._client_factory is not None
            self._client = self._client_factory()
        return self._client

    # ------------------------------------------------------------ lifetime

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, except that a Linux terminal gets one whose input thread sleeps.

        A driver named in `TEXTUAL_DRIVER` (textual-serve's, or one a person chose) is kept.
        """
        driver = super().get_driver_class()
        if constants.DRIVER is None and driver.__name__ == "LinuxDriver":
            from ito_tui.tui.textual_private import QuietLinuxDriver

            return QuietLinuxDriver
        return driver

    def on_mount(self) -> None:
        self.screen_change_signal.subscribe(self, self._screen_changed)
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        for notice in self.theme_notices:
            self.notify(notice, severity="warning", timeout=8, markup=False)
        # `ito-tui` paused the cyclic collector for start-up; the first frame ends it.
        self.call_after_refresh(startup.resume)

    async def on_unmount(self) -> None:
        await self.alerting.aclose()
        if self._client is not None:
            await self._client.aclose()

    # ------------------------------------------------------------ connection

    @on(Connected)
    def _connected(self, event: Connected) -> None:
        session = self.session
        session.capabilities, session.operator = event.capabilities, event.operator
        self.set_connection("live")
        # Every run alerts on every screen; once the start screen is up (its run lent).
        self.call_after_refresh(self.alerting.start)
        if self._reconnecting:
            # Reconnected in place (ctrl+l, a retry): each screen of the stack follows or
            # fetches again; the operator stays where they were.
            self._reconnecting = False
            for screen in self.screen_stack:
                screen.post_message(Reconnected())
        if not self._connected_once:
            self._connected_once = True
            start, self.start = self.start, None
            self.navigation.start(start, event.active_runs)

    @on(LoginNeeded)
    def _login_needed(self, event: LoginNeeded) -> None:
        self.session.capabilities = event.capabilities
        self.set_connection("live")  # reachable; the token is what is missing
        self.errors.ask_login(event.reason, keyring_problem=event.keyring_problem)

    def action_reconnect(self) -> None:
        """Read capabilities and who you are again (keeps the token in memory), in place:
        the screens stay, and each follows or fetches again once connected."""
        self.session.capabilities = self.session.operator = None
        self.alerting.stop()  # the next `Connected` starts a fresh watcher
        self.set_connection("connecting")
        error = sys.modules.get("ito_tui.tui.screens.error")
        if error is not None and isinstance(self.screen, error.ErrorScreen):
            self.pop_screen()  # it was about the connection being tried again
        self._reconnecting = True
        log.info("reconnecting in place to %s", self.session.backend_host)
        self._connecting = self.run_worker(
            self._reconnect, group="app-connect", exclusive=True, exit_on_error=False
        )

    async def _reconnect(self) -> None:
        from ito_tui.tui.screens.connect import connection_step

        self.post_message(await connection_step(self))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "app-connect":
            forward_failure(self, event)  # unreachable again: the sink shows why

    @on(WorkerFailed)
    def _worker_failed(self, event: WorkerFailed) -> None:
        """The single sink for errors a screen's worker did not handle itself."""
        if self._reconnecting:
            self._reconnecting = False  # the error screen's retry starts over
        self.errors.failed(event.error)

    def action_login(self) -> None:
        self.errors.ask_login()

    # ------------------------------------------------------------ navigation

    @on(BookingChosen)
    def _booking_chosen(self, event: BookingChosen) -> None:
        self.navigation.new_run(event.booking)

    @on(RunChosen)
    def _run_chosen(self, event: RunChosen) -> None:
        self.navigation.run(event.run_id)

    @on(RunSubmitted)
    def _run_submitted(self, event: RunSubmitted) -> None:
        self.navigation.submitted(event.run)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "bookings":
            # Hidden where it would do nothing: connecting, or already on the picker.
            return self.session.operator is not None and not isinstance(self.screen, BookingsScreen)
        if action == "runs":
            return self.session.operator is not None and not is_runs_list(self.screen)
        return True

    def action_help(self) -> None:
        from ito_tui.tui.screens.help import HelpScreen  # not on the way to the first frame

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_bookings(self) -> None:
        self.navigation.booking(None)

    def action_runs(self) -> None:
        """Go to the runs list (see `Navigation.runs`)."""
        self.navigation.runs()

    def action_needs_you(self) -> None:
        """Open the proposal that expires first, in whichever run, from any screen."""
        self.alerting.jump()

    def show_booking(self, booking_id: str | None) -> None:
        """Go to the booking picker (highlighting `booking_id`) — the base of the stack."""
        self.navigation.booking(booking_id)

    def show_run(self, run_id: str) -> None:
        """Open the run's pipeline screen over the current screen."""
        self.navigation.run(run_id)

    def show_decisions(self) -> None:
        """Open the Decisions screen (every proposal across runs) over the current screen."""
        self.navigation.decisions()

    # ------------------------------------------------------------ what screens share

    def _screen_changed(self, screen: Screen[Any]) -> None:
        # Screens of the run part build their own header strips: badge them too.
        for header in screen.query(HeaderStrip):
            header.read_only = self.session.read_only
        self.alerting.screen_changed(screen)

    @property
    def alerter(self) -> Alerter:
        return self.alerting.alerter  # the one alert router, for every screen's alerts

    @property
    def needs_you(self) -> NeedsYou:
        """What waits for the operator across every run the app follows."""
        return self.alerting.needs_you

    def mark_seen(self, proposal_id: str) -> None:
        """Note that the operator was shown `proposal_id`."""
        self.alerting.mark_seen(proposal_id)

    def set_connection(self, state: str) -> None:
        """Show `state` in every header strip and remember it for new screens."""
        self.session.connection = state
        for screen in self.screen_stack:
            for header in screen.query(HeaderStrip):
                header.connection = state
                header.operator = self.session.operator
                header.demo = self.session.demo
                header.read_only = self.session.read_only

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Keys of the current screen", self.action_help)
        yield SystemCommand("Bookings", "Go to the booking picker", self.action_bookings)
        yield SystemCommand("Runs", "List every run on the backend", self.action_runs)
        yield SystemCommand("Most urgent proposal", "Expires first, any run", self.action_needs_you)
        yield SystemCommand(
            "Decisions", "Every proposal across runs: who decided what, when", self.show_decisions
        )
        yield SystemCommand(
            "Reconnect", "Connect to the backend again; this screen stays", self.action_reconnect
        )
        yield SystemCommand("Log in", "Enter an operator token", self.action_login)
        yield from binding_commands(screen, skip=self)


def make_app(
    settings: Settings,
    client: ItoApi | ClientFactory,
    *,
    read_only: bool = False,
    start: str | None = None,
    token: TokenCell | None = None,
    clock: Callable[[], datetime] | None = None,
) -> ItoApp:
    """Build the app for `settings` around `client` (or a factory creating it lazily).

    `token` is the cell the client reads its token from (so the login modal can
    set it); `clock` freezes relative times in tests; `start` is "bookings",
    "runs", a booking id or a run id.
    """
    session = Session(
        backend_url=settings.backend_url,
        token=token or TokenCell(),
        read_only=read_only or settings.read_only,
    )
    if clock is not None:
        session.clock = clock
    return ItoApp(settings, client, session, start=start)
