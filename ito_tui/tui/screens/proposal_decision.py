"""The deciding half of the proposal modal: Decide later, Reject, the two-step Approve, the POST.

`ProposalModal` (`screens/proposal.py`) is this screen plus the review it renders; the
rule that only a deliberate second step approves a restart is kept here.
"""

from __future__ import annotations

import time
import uuid

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ito_tui.client.errors import Conflict, ItoError
from ito_tui.contract import Proposal
from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell

CLOSE_GRACE_S = 1.0
"""After the outcome appears, the Close button ignores presses this long (Esc still closes)."""
CONFIRM_WORD = "approve"
"""What the operator types to confirm an approval."""


class DecidingModal(StyledOnFirstShow, ModalScreen[str | None]):
    """The choices of a proposal modal and the decision they send; dismisses with it, or None.

    The subclass composes the widgets it drives (`#choices`, `#decide-later`, `#reject`,
    `#approve`, `#confirm-label`, `#confirm-row`, `#confirm-input`, `#confirm-approve`,
    `#comment`, `#proposal-error`). A base, not a mixin, so that its `@on` handlers
    register: Textual collects them per class through its message-pump metaclass.
    """

    BINDINGS = [
        Binding(
            "escape",
            "decide_later",
            "Decide later",
            id="proposal.decide_later",
            tooltip="Close without deciding; the proposal stays pending",
        ),
        # Escape once the proposal is decided (ours or someone else's): the same close,
        # in the words of the one button left.
        Binding(
            "escape",
            "close",
            "Close",
            id="proposal.close",
            tooltip="Close; the decision is recorded",
        ),
    ]

    proposal: reactive[Proposal | None] = reactive(None, always_update=True)
    """The proposal shown; the pipeline updates it when its status changes."""
    in_flight: reactive[bool] = reactive(False)
    """A decision POST is on its way (buttons are disabled)."""

    def __init__(self, *, read_only: bool) -> None:
        super().__init__()
        self.read_only = read_only
        self._keys: dict[str, str] = {}
        self._sent: str | None = None
        self._by_someone_else = False
        self._closed_at: float | None = None

    def _close_choices(self) -> None:
        """After a decision (ours or someone else's) only Close remains."""
        for selector in ("#reject", "#approve", "#confirm-row", "#confirm-label", "#comment"):
            for widget in self.query(selector):
                widget.add_class("-hidden")
                if isinstance(widget, Button):
                    widget.disabled = True
        self.query_one("#choices").remove_class("-hidden")
        if self._closed_at is None:
            self._closed_at = time.monotonic()
        later = self.query_one("#decide-later", Button)
        later.label = "Close"
        later.focus()
        self.refresh_bindings()  # the footer's `esc Decide later` becomes `esc Close`

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("decide_later", "close"):
            return (action == "close") == (self._closed_at is not None)
        return super().check_action(action, parameters)

    def watch_in_flight(self, busy: bool) -> None:
        for button in self.query(Button):
            if button.id != "decide-later":
                button.disabled = busy or (
                    button.id == "confirm-approve" and not self._confirm_typed()
                )

    # ------------------------------------------------------------ choices

    def action_decide_later(self) -> None:
        """Close without sending anything; the proposal stays pending."""
        self.dismiss(self._sent)

    def action_close(self) -> None:
        """Close once the proposal is decided."""
        self.dismiss(self._sent)

    @property
    def settled(self) -> bool:
        """Whether the modal has been on screen long enough that a key on it was meant for
        it (the subclass times it; True here)."""
        return True

    @on(Button.Pressed, "#decide-later")
    def _decide_later(self) -> None:
        # A key already on its way when the outcome arrived must not close it unread, nor
        # one that came with the modal (an Enter meant for the screen below).
        if self._closed_at is not None and time.monotonic() - self._closed_at < CLOSE_GRACE_S:
            return
        if not self.settled:
            return
        self.action_decide_later()

    @on(Button.Pressed, "#approve")
    def _approve_step_one(self) -> None:
        """First step of approving: only reveals the confirmation prompt."""
        if self.read_only:
            return
        self.query_one("#choices").add_class("-hidden")
        self.query_one("#confirm-label").remove_class("-hidden")
        self.query_one("#confirm-row").remove_class("-hidden")
        self.query_one("#confirm-input", Input).focus()

    @on(Button.Pressed, "#confirm-back")
    def _approve_back(self) -> None:
        self.query_one("#confirm-input", Input).value = ""
        self.query_one("#confirm-label").add_class("-hidden")
        self.query_one("#confirm-row").add_class("-hidden")
        self.query_one("#choices").remove_class("-hidden")
        self.query_one("#decide-later", Button).focus()

    def _confirm_typed(self) -> bool:
        inputs = self.query("#confirm-input").results(Input)
        return any(i.value.strip().lower() == CONFIRM_WORD for i in inputs)

    @on(Input.Changed, "#confirm-input")
    def _confirm_changed(self) -> None:
        self.query_one("#confirm-approve", Button).disabled = (
            self.in_flight or not self._confirm_typed()
        )

    @on(Input.Submitted, "#confirm-input")
    @on(Button.Pressed, "#confirm-approve")
    def _approve_confirmed(self) -> None:
        if self._confirm_typed():
            self._decide("approve")

    @on(Button.Pressed, "#reject")
    def _reject(self) -> None:
        self._decide("reject")

    def _decide(self, decision: str) -> None:
        if self.read_only or self.in_flight or self._sent is not None:
            return
        if self.proposal is None or str(self.proposal.status) != "pending":
            return
        # One key per decision for the modal's lifetime: a retry replays, never duplicates.
        key = self._keys.setdefault(decision, str(uuid.uuid4()))
        self.in_flight = True
        self._post(decision, key, self.query_one("#comment", Input).value.strip() or None)

    @work(exclusive=True, group="proposal-decision", exit_on_error=False)
    async def _post(self, decision: str, key: str, comment: str | None) -> None:
        proposal = self.proposal
        assert proposal is not None
        client = shell(self).client
        error = self.query_one("#proposal-error", Static)
        try:
            if decision == "approve":
                result = await client.approve(
                    proposal.proposal_id, comment=comment, idempotency_key=key
                )
            else:
                result = await client.reject(
                    proposal.proposal_id, comment=comment, idempotency_key=key
                )
        except Conflict as exc:
            if exc.code == "idempotency.in_flight":
                # Our own earlier press is still being processed: same key, try again later.
                error.update(Text("Your decision is still being processed; press again."))
                error.remove_class("-hidden")
                self.in_flight = False
                return
            self._sent = "conflict"
            if exc.current is not None:
                self._by_someone_else = True
                self.proposal = exc.current
                return
            if exc.code == "proposal.expired":
                message = (
                    f"This proposal EXPIRED and was {safe(proposal.on_expiry)}ed as its expiry "
                    "rule says. Your decision was not applied."
                )
            else:
                message = f"Not decided: {safe(str(exc))}"
            error.update(Text(message))
            error.remove_class("-hidden")
            self._close_choices()
            return
        except ItoError as exc:
            error.update(
                Text(f"Could not send the decision: {safe(str(exc))}. Press again to retry.")
            )
            error.remove_class("-hidden")
            self.in_flight = False
            # Disabling the button moved focus away; put it back for the retry.
            self.query_one("#reject" if decision == "reject" else "#confirm-input").focus()
            return
        self._sent = decision
        self.proposal = result
        self.in_flight = False
