"""ItoApp: wires screens, themes, global keys, the command palette and the client's lifetime."""

from __future__ import annotations

import logging
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
from ito_tui.tui.errors import WorkerFailed, describe_failure
from ito_tui.tui.format import safe
from ito_tui.tui.navigation import is_runs_list, run_screen, runs_screen
from ito_tui.tui.needs_you import AppAlerts
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.connect import Connected, LoginNeeded
from ito_tui.tui.session import Session, TokenCell
from ito_tui.tui.theming import ThemedApp
from ito_tui.tui.widgets.header import HeaderStrip

if TYPE_CHECKING:
    from textual.driver import Driver

    from ito_tui.alerting.needs import NeedsYou
    from ito_tui.client import ItoClient
    from ito_tui.config import Settings
    from ito_tui.tui.alerts import Alerter
    from ito_tui.tui.screens.spec_form import SpecFormScreen

log = logging.getLogger(__name__)
ClientFactory = Callable[[], "ItoClient"]
MAIN_MODE = "main"
START_MODE = "start"
FLOW_CAPABILITIES = ("runs.create", "estimates.create")
"""What picking a booking to train on needs from the backend."""


class ItoApp(ThemedApp[None]):
    """The ito-tui application. Build it with `make_app`."""

    TITLE = "ito"
    # The booking picker is the base of the one screen stack, painted at once while the
    # connection step runs in it. A mode, not Textual's default screen, so that a run or
    # the runs list can start as the base of a mode of its own and `_back_to_base` can
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
            tooltip="Read capabilities and who you are again",
            show=False,
        ),
    ]

    def __init__(
        self,
        settings: Settings,
        client: ItoClient | ClientFactory,
        session: Session,
        *,
        start: str | None = None,
    ) -> None:
        self.settings = settings
        self.session = session
        self.start = start
        self._client: ItoClient | None = None
        self._client_factory: ClientFactory | None = None
        self._start_base: Screen[None] | None = None
        """The base of the start stack (the runs list or a run), when the app began there."""
        if hasattr(client, "capabilities"):
            self._client = cast("ItoClient", client)
        else:
            self._client_factory = client
        super().__init__(settings.theme)
        self.alerting = AppAlerts(self, settings, session)
        """The app's watcher of every run, its alert router and the "needs you" counter."""
        highlight = start if start and start.startswith("bk_") else None
        self.add_mode(MAIN_MODE, lambda: BookingsScreen(highlight=highlight))

    @property
    def client(self) -> ItoClient:
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
            from ito_tui.tui.driver import QuietLinuxDriver

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

    # ------------------------------------------------------------ navigation

    @on(Connected)
    def _connected(self, event: Connected) -> None:
        session = self.session
        session.capabilities, session.operator = event.capabilities, event.operator
        self.set_connection("live")
        # Every run alerts on every screen; once the start screen is up (its run lent).
        self.call_after_refresh(self.alerting.start)
        # The picker is already up. A run or the runs list, when that is where to start,
        # becomes the base of a stack of its own (Esc there does not fall into the picker).
        start, self.start = self.start, None
        screen: Screen[None] | None = None
        if start and start.startswith("run_"):
            screen = run_screen(start)
        elif start != "bookings" and (event.active_runs or start == "runs"):
            screen = runs_screen()
        if screen is not None:
            base = self._start_base = screen
            self.add_mode(START_MODE, lambda: base)
            self.switch_mode(START_MODE)

    @on(LoginNeeded)
    def _login_needed(self, event: LoginNeeded) -> None:
        self.session.capabilities = event.capabilities
        self.set_connection("live")  # reachable; the token is what is missing
        self._ask_login(event.reason, keyring_problem=event.keyring_problem)

    def _after_login(self, operator: str | None) -> None:
        if operator is None:
            self._show_error("Not logged in", "This backend needs an operator token.", login=True)
        elif self.session.operator is None:
            self.action_reconnect()
        else:
            self.session.operator = operator
            self.set_connection("live")
            self.alerting.start()
            self.notify(f"Logged in as {safe(operator)}. Try that again.", markup=False)

    def _show_error(self, title: str, detail: str, *, login: bool = False) -> None:
        """Show an error screen over the picker, closing whatever was open above it."""
        from ito_tui.tui.screens.error import ErrorScreen  # not on the way to the first frame

        self._back_to_base()
        self.push_screen(ErrorScreen(title, detail, login=login))

    def _ask_login(self, reason: str = "", *, keyring_problem: str | None = None) -> None:
        from ito_tui.tui.screens.login import LoginModal  # not on the way to the first frame

        self.alerting.stop()  # nothing is asked of the backend while the prompt waits
        self.push_screen(
            LoginModal(reason, keyring_problem=keyring_problem), callback=self._after_login
        )

    def _missing_capability(
        self, name: str, *, status: str = "not_implemented", detail: str
    ) -> None:
        from ito_tui.tui.screens.capability import CapabilityScreen  # ditto

        self.push_screen(CapabilityScreen(name, status=status, detail=detail))

    def _back_to_base(self) -> None:
        """Back to the picker at the base of the main stack."""
        if self.current_mode != MAIN_MODE:
            self.switch_mode(MAIN_MODE)
        while len(self.screen_stack) > 1:
            self.pop_screen()

    @on(BookingsScreen.BookingChosen)
    def _booking_chosen(self, event: BookingsScreen.BookingChosen) -> None:
        caps = self.session.capabilities
        for name in FLOW_CAPABILITIES:
            if caps is not None and not caps.has(name):
                detail = next((c.detail for c in caps.capabilities if c.name == name), None)
                self._missing_capability(name, status=caps.status_of(name), detail=detail or "")
                return
        # Imported when first needed: the form's widgets are not on the way to the first frame.
        from ito_tui.tui.screens.spec_form import SpecFormScreen

        self.push_screen(SpecFormScreen(event.booking))

    @on(BookingsScreen.RunChosen)
    def _run_chosen(self, event: BookingsScreen.RunChosen) -> None:
        self.show_run(event.run_id)

    def on_spec_form_screen_run_submitted(self, event: SpecFormScreen.RunSubmitted) -> None:
        """The spec form's run was accepted: show it in place of the form."""
        run_id = safe(event.run.run_id)
        self.notify(f"Run {run_id} submitted.", markup=False)
        self.switch_screen(run_screen(event.run.run_id))

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

    # ------------------------------------------------------------ errors

    @on(WorkerFailed)
    def _worker_failed(self, event: WorkerFailed) -> None:
        """The single sink for errors a screen's worker did not handle itself."""
        failure = describe_failure(event.error)
        log.warning("%s: %s", failure.title, failure.detail)
        if failure.capability:
            self._missing_capability(failure.capability, detail=failure.detail)
        elif failure.login:
            self._ask_login(failure.detail)
        elif failure.protocol and self.session.operator is not None:
            # One endpoint sent malformed data (the message names it and the field): the
            # session and the rest of the screen stay usable.
            self.notify(failure.detail, title=failure.title, severity="error", markup=False)
        elif failure.fatal:
            self.set_connection("offline")
            self._show_error(failure.title, failure.detail)
        else:
            self.notify(failure.detail, title=failure.title, severity="error", markup=False)

    # ------------------------------------------------------------ actions

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

    def action_reconnect(self) -> None:
        """Start over from the connection step (keeps the token in memory)."""
        self.session.capabilities = self.session.operator = None
        self.alerting.stop()  # the next `Connected` starts a fresh watcher
        self.set_connection("connecting")
        self._back_to_base()
        if isinstance(self.screen, BookingsScreen):
            self.screen.connect()

    def action_login(self) -> None:
        self._ask_login()

    def action_bookings(self) -> None:
        self.show_booking(None)

    def action_runs(self) -> None:
        """Go to the runs list: the one the app started on, or a new one over the picker
        (Esc goes back to it). Whatever was open above either is closed, as ctrl+o does."""
        if self.session.capabilities is None or self.session.operator is None:
            return
        if is_runs_list(self._start_base):
            if self.current_mode != START_MODE:
                self.switch_mode(START_MODE)
            while len(self.screen_stack) > 1:
                self.pop_screen()
            return
        if is_runs_list(self.screen):
            return
        self._back_to_base()
        self.push_screen(runs_screen())

    def show_booking(self, booking_id: str | None) -> None:
        """Go to the booking picker (highlighting `booking_id`) — the base of the stack."""
        if self.session.capabilities is None:
            return
        if self.session.operator is None:
            return
        self._back_to_base()
        if isinstance(self.screen, BookingsScreen) and booking_id:
            self.screen.highlight(booking_id)

    def show_run(self, run_id: str) -> None:
        """Open the run's pipeline screen over the current screen."""
        self.push_screen(run_screen(run_id))

    def show_decisions(self) -> None:
        """Open the Decisions screen (every proposal across runs) over the current screen."""
        caps, name = self.session.capabilities, "proposals.read"
        if caps is None or self.session.operator is None:
            return
        if not caps.has(name):
            detail = next((c.detail for c in caps.capabilities if c.name == name), None)
            self._missing_capability(name, status=caps.status_of(name), detail=detail or "")
            return
        from ito_tui.tui.screens.decisions import DecisionsScreen  # not on the first frame

        if not isinstance(self.screen, DecisionsScreen):
            self.push_screen(DecisionsScreen())

    def action_needs_you(self) -> None:
        """Open the proposal that expires first, in whichever run, from any screen."""
        self.alerting.jump()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Keys of the current screen", self.action_help)
        yield SystemCommand("Bookings", "Go to the booking picker", self.action_bookings)
        yield SystemCommand("Runs", "List every run on the backend", self.action_runs)
        yield SystemCommand("Most urgent proposal", "Expires first, any run", self.action_needs_you)
        yield SystemCommand(
            "Decisions", "Every proposal across runs: who decided what, when", self.show_decisions
        )
        yield SystemCommand("Reconnect", "Connect to the backend again", self.action_reconnect)
        yield SystemCommand("Log in", "Enter an operator token", self.action_login)
        yield from binding_commands(screen, skip=self)


def make_app(
    settings: Settings,
    client: ItoClient | ClientFactory,
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
