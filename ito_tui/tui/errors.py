"""What the app does with an error no screen handled: one mapping, one place, one sink.

Screens forward their workers' errors (`forward_failure`) as `WorkerFailed`; the app hands
each to its `ErrorSink`, which maps it (`describe_failure`) to what the operator sees: the
login prompt, the missing capability, a toast, or the error screen over the picker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState

from ito_tui.textsafe import safe
from ito_tui.tui.messages import WorkerFailed

if TYPE_CHECKING:
    from ito_tui.tui.app import ItoApp

log = logging.getLogger(__name__)


def forward_failure(node: MessagePump, event: Worker.StateChanged) -> None:
    """Send a failed worker's error towards the app's single error handler.

    Worker state messages do not bubble, so each screen calls this from its
    `on_worker_state_changed`.
    """
    if event.state == WorkerState.ERROR and event.worker.error is not None:
        event.stop()
        node.post_message(WorkerFailed(event.worker.error))


@dataclass(frozen=True)
class Failure:
    """How to present an error: a title and detail safe to show, and where it leads."""

    title: str
    detail: str
    fatal: bool = False
    """The backend is unusable: show the error screen (retry, quit); never a fallback."""
    login: bool = False
    """The token was rejected: ask for one."""
    capability: str | None = None
    """A capability the backend does not provide: name it and stop the flow."""
    protocol: bool = False
    """Malformed data from one endpoint: once connected, name it and keep the screen working."""


def describe_failure(error: BaseException) -> Failure:
    """Map a worker's exception to what the operator should see."""
    from ito_tui.client import (
        AuthError,
        BackendUnavailable,
        CapabilityMissing,
        ItoError,
        ProtocolError,
        TransportPolicyError,
    )

    detail = safe(error)
    if isinstance(error, CapabilityMissing):
        return Failure("Missing capability", detail, capability=error.capability or "unknown")
    if isinstance(error, AuthError):
        return Failure("Not authenticated", "The backend did not accept the token.", login=True)
    if isinstance(error, BackendUnavailable):
        return Failure("Backend unreachable", detail, fatal=True)
    if isinstance(error, TransportPolicyError):
        return Failure("Connection refused by policy", detail, fatal=True)
    if isinstance(error, ProtocolError):
        return Failure("Backend answered something unexpected", detail, fatal=True, protocol=True)
    if isinstance(error, ItoError):
        return Failure("Backend error", detail)
    # A bug of ours: say so plainly, without a stack trace on screen (the log has it).
    return Failure("Unexpected error", f"{type(error).__name__}: {detail}")


class ErrorSink:
    """The app's one sink for errors no screen handled, and the screens it shows for them
    (the error screen, the login prompt, a missing capability)."""

    def __init__(self, app: ItoApp) -> None:
        self.app = app

    def failed(self, error: BaseException) -> None:
        """Show what `error` (a worker's, unhandled) means for the operator."""
        app = self.app
        failure = describe_failure(error)
        log.warning("%s: %s", failure.title, failure.detail)
        if failure.capability:
            self.missing_capability(failure.capability, detail=failure.detail)
        elif failure.login:
            self.ask_login(failure.detail)
        elif failure.protocol and app.session.operator is not None:
            # One endpoint sent malformed data (the message names it and the field): the
            # session and the rest of the screen stay usable.
            app.notify(failure.detail, title=failure.title, severity="error", markup=False)
        elif failure.fatal:
            app.set_connection("offline")
            self.show_error(failure.title, failure.detail)
        else:
            app.notify(failure.detail, title=failure.title, severity="error", markup=False)

    def show_error(self, title: str, detail: str, *, login: bool = False) -> None:
        """Show an error screen over the current screen (one at a time). The screens
        below stay: its Retry reconnects in place (ctrl+l), and each follows again."""
        from ito_tui.tui.screens.error import ErrorScreen  # not on the way to the first frame

        if isinstance(self.app.screen, ErrorScreen):
            self.app.pop_screen()  # the newer error replaces it
        self.app.push_screen(ErrorScreen(title, detail, login=login))

    def ask_login(self, reason: str = "", *, keyring_problem: str | None = None) -> None:
        """The login prompt over the current screen; nothing is asked of the backend while
        it waits."""
        from ito_tui.tui.screens.login import LoginModal  # not on the way to the first frame

        self.app.alerting.stop()
        self.app.push_screen(
            LoginModal(reason, keyring_problem=keyring_problem), callback=self._after_login
        )

    def _after_login(self, operator: str | None) -> None:
        app = self.app
        if operator is None:
            self.show_error("Not logged in", "This backend needs an operator token.", login=True)
        elif app.session.operator is None:
            app.action_reconnect()
        else:
            app.session.operator = operator
            app.set_connection("live")
            app.alerting.start()
            app.notify(f"Logged in as {safe(operator)}. Try that again.", markup=False)

    def missing_capability(
        self, name: str, *, status: str = "not_implemented", detail: str
    ) -> None:
        """Name the capability the backend lacks, over the current screen."""
        from ito_tui.tui.screens.capability import CapabilityScreen  # ditto

        self.app.push_screen(CapabilityScreen(name, status=status, detail=detail))

    def has_capability(self, name: str) -> bool:
        """Whether the backend provides `name`; if it says it does not, name it on screen.
        (Unknown capabilities, before the first connection, are not refused here.)"""
        caps = self.app.session.capabilities
        if caps is None or caps.has(name):
            return True
        detail = next((c.detail for c in caps.capabilities if c.name == name), None)
        self.missing_capability(name, status=caps.status_of(name), detail=detail or "")
        return False
