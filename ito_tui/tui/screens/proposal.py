"""The human-gated restart proposal modal: review, then decide later, reject or approve.

The product's most important rule lives here: only a person approves a restart, and
only deliberately. The default focus is *Decide later*; Esc and Enter on it send
nothing. Approving takes a second step (typing `approve`, then confirming), so no
single key press from the modal's initial state approves anything. A decision is
one POST with an Idempotency-Key that is reused if the operator presses again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Button, Input, Static
from textual.worker import Worker

from ito_tui.client.errors import (
    AuthError,
    BackendUnavailable,
    ItoError,
    TransportPolicyError,
)
from ito_tui.contract import Proposal
from ito_tui.describe import consequence, proposal_words, reject_consequence
from ito_tui.textsafe import safe
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.screens.proposal_decision import CONFIRM_WORD, DecidingModal
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.loss_window import LossWindow
from ito_tui.tui.widgets.proposal_text import (
    cost_text,
    decided_text,
    title_text,
    waiting_text,
    what_text,
    who_text,
    why_text,
)
from ito_tui.tui.widgets.sparkline import TextSparkline
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput

if TYPE_CHECKING:
    from ito_tui.state.views import ChartView
    from ito_tui.tui.session import Session

HISTORY_POINTS = 2000
"""Telemetry points fetched for a modal's loss window (the pipeline's backfill size)."""
OPEN_GRACE_S = 0.5
"""For this long after the modal is first drawn, a key on a button was meant for the screen
below (`2` for one of its tabs, an Enter, as the modal popped up): text typed is not taken
as the comment, and Decide later is not pressed. Quicker than anyone reads the proposal
and starts a comment or decides to close it; the comment box, once focused, takes every
key, and Esc closes at once."""


class ProposalModal(DecidingModal):
    """Review a restart proposal. Dismisses with the decision sent, or None."""

    # Focused as the modal is shown, not a moment later from on_mount (a deferred focus
    # call): a Tab that arrives at once then moves on from Decide later, not to it.
    AUTO_FOCUS = "#decide-later"

    HOLDS_TOASTS = True
    """Other alerts' toasts wait until the modal closes (`Alerter.release`): at 80×24 one
    covered Cost, Who and the buttons for its 5 s. The bell and the terminal title still
    tell at once."""

    CSS_PATH = "proposal.tcss"

    loss: reactive[ChartView | None] = reactive(None, repaint=False)
    """The run's live loss chart, pushed by the run screen while the modal is open."""
    loss_width: reactive[int] = reactive(0, repaint=False)
    """The live loss chart's width in columns, once laid out (0 before): the run screen
    computes the views it pushes at this width."""

    def __init__(
        self,
        proposal: Proposal,
        *,
        read_only: bool = False,
        loss: ChartView | None = None,
        loss_history: bool = False,
        operator: str | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        """`loss` is the run's live loss (the run screen's, which keeps pushing it to
        `self.loss`); without one, `loss_history` fetches the run's telemetry once and
        draws the loss up to the ask (a proposal opened from the Decisions screen or the
        palette)."""
        super().__init__(read_only=read_only)
        self._initial = proposal
        self.live_loss = loss is not None
        self.set_reactive(ProposalModal.loss, loss)
        self.loss_history = loss_history and loss is None
        self.operator = operator
        self._clock = clock
        self._countdown: Timer | None = None
        self._drawn_at: float | None = None
        """When the modal was first drawn (None: not yet): see `settled`."""

    def compose(self) -> ComposeResult:
        with Vertical(id="proposal-box"):
            yield Static(id="proposal-title", markup=False)
            yield Static(id="proposal-paused", markup=False)
            yield Static(id="proposal-why", markup=False)
            if self.live_loss:
                yield TextSparkline(self.loss, id="proposal-loss")
            elif self.loss_history:
                yield LossWindow(self._initial.created_at, id="loss-window")
            yield Static(id="proposal-what", markup=False)
            yield Static(id="proposal-cost", markup=False)
            yield Static(id="proposal-who", markup=False)
            yield Static(id="proposal-decided", markup=False, classes="-hidden")
            yield Static(id="proposal-error", markup=False, classes="-hidden")
            yield SteadyInput(
                compact=True,
                placeholder="comment (recorded with your decision)",
                id="comment",
                max_length=2000,
                # Typing on a button lands here (`on_key`): selecting on focus would make
                # the next letter replace what was written.
                select_on_focus=False,
                classes="-hidden" if self.read_only else "",
            )
            with Horizontal(id="choices"):
                yield Button("Decide later", id="decide-later", compact=True)
                if not self.read_only:
                    words = proposal_words(self._initial.kind)
                    reject = Button(words.reject_label, id="reject", compact=True)
                    reject.tooltip = reject_consequence(self._initial)
                    yield reject
                    yield Button(words.approve_label, id="approve", compact=True)
            if not self.read_only:
                yield Static(
                    f"{proposal_words(self._initial.kind).confirm_title} "
                    f"{consequence(self._initial)} Type '{CONFIRM_WORD}' and press Enter or "
                    "Confirm.",
                    id="confirm-label",
                    classes="-hidden",
                    markup=False,
                )
                with Horizontal(id="confirm-row", classes="-hidden"):
                    yield SteadyInput(
                        placeholder=f"type {CONFIRM_WORD}", id="confirm-input", compact=True
                    )
                    yield Button(
                        "Confirm approval", id="confirm-approve", disabled=True, compact=True
                    )
                    yield Button("Back", id="confirm-back", compact=True)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.proposal = self._initial
        self._show(self._initial)
        if self.loss_history:
            self._load_loss()
        self.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        self._drawn_at = time.monotonic()

    @property
    def settled(self) -> bool:
        """Whether the modal has been on screen for `OPEN_GRACE_S`: before that, text typed
        on a button is dropped (not the comment) and Decide later ignores a press."""
        drawn = self._drawn_at
        return drawn is not None and time.monotonic() - drawn >= OPEN_GRACE_S

    def watch_loss(self, view: ChartView | None) -> None:
        if self.live_loss and self.is_mounted:
            # None while the modal closes (its children go first): a paint then is dropped.
            for chart in self.query("#proposal-loss").results(TextSparkline):
                chart.view = view

    def on_text_sparkline_resized(self, event: TextSparkline.Resized) -> None:
        event.stop()
        self.loss_width = event.width

    def on_key(self, event: events.Key) -> None:
        """Text typed while a button has focus goes to the comment, where it was meant to
        go (the modal opens on Decide later; the letters were dropped) — once the modal
        has been on screen a moment (`settled`). A key that came with the modal was
        meant for the screen below: it is dropped, not recorded with the decision."""
        if not (event.is_printable and event.character and isinstance(self.focused, Button)):
            return
        comment = self.query_one("#comment", Input)
        if comment.has_class("-hidden") or comment.disabled:
            return
        event.stop()
        event.prevent_default()
        if not self.settled:
            return
        comment.focus()
        comment.insert_text_at_cursor(event.character)

    def shows(self, proposal_id: str) -> bool:
        """Whether this modal is about `proposal_id`."""
        return self.proposal is not None and self.proposal.proposal_id == proposal_id

    def now(self) -> datetime:
        return self._clock() if self._clock is not None else shell(self).session.clock()

    # ------------------------------------------------------------ rendering

    def watch_proposal(self, proposal: Proposal | None) -> None:
        if proposal is not None and self.is_mounted:
            self._show(proposal)

    def _show(self, proposal: Proposal) -> None:
        pending = str(proposal.status) == "pending"
        self.query_one("#proposal-title", Static).update(title_text(proposal))
        self.query_one("#proposal-why", Static).update(why_text(proposal))
        self.query_one("#proposal-what", Static).update(what_text(proposal))
        self.query_one("#proposal-cost", Static).update(cost_text(proposal))
        who = self.query_one("#proposal-who", Static)
        who.update(who_text(self.operator, read_only=self.read_only))
        who.set_class(not pending, "-hidden")  # once decided, the decision says who
        decided = self.query_one("#proposal-decided", Static)
        decided.set_class(pending, "-hidden")
        if not pending:
            # "Someone else" is news only to a modal opened to decide (not a record's).
            asked = str(self._initial.status) == "pending"
            elsewhere = self._by_someone_else or bool(
                asked
                and proposal.decided_by
                and self.operator
                and proposal.decided_by != self.operator
            )
            decided.update(decided_text(proposal, self.now(), by_someone_else=elsewhere))
            self._close_choices()
        self._tick()
        if pending and self._countdown is None:
            self._countdown = self.set_interval(1.0, self._tick)
        elif not pending and self._countdown is not None:
            self._countdown.stop()
            self._countdown = None

    def _tick(self) -> None:
        """Redraw the countdown line (the only thing that changes every second)."""
        if self.proposal is not None:
            self.query_one("#proposal-paused", Static).update(
                waiting_text(self.proposal, self.now())
            )

    @work(exclusive=True, group="proposal-loss", exit_on_error=False)
    async def _load_loss(self) -> None:
        """Fetch the run's telemetry once for the loss window (no live stream here)."""
        window = self.query_one(LossWindow)
        try:
            page = await shell(self).client.telemetry(
                self._initial.run_id, max_points=HISTORY_POINTS
            )
        except (AuthError, BackendUnavailable, TransportPolicyError):
            window.fail("the backend did not answer")
            raise  # the session's problem: the app's error sink decides
        except ItoError as exc:
            # No chart (a missing runs.telemetry says so too); the decision stays possible.
            window.fail(safe(str(exc)))
            return
        window.show(page.items)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "proposal-loss":
            forward_failure(self, event)


def review_modal(proposal: Proposal, session: Session) -> ProposalModal:
    """The modal for `proposal` away from its run's pipeline (the Decisions screen, the
    palette): the decision while it is pending (unless the session is read-only), its
    record once decided; the loss window drawn as it was when it was asked."""
    pending, trigger = str(proposal.status) == "pending", proposal.trigger
    return ProposalModal(
        proposal,
        read_only=session.read_only or not pending,
        operator=session.operator,
        # A loss chart only for what the loss triggered (not for a budget running out).
        loss_history=trigger.loss is not None or trigger.loss_z is not None,
    )
