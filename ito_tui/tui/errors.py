"""What the app does with an error no screen handled: one mapping, one place."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState

from ito_tui.tui.format import safe


class WorkerFailed(Message):
    """A screen's worker raised an error the screen did not handle; bubbles to the app."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


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
