"""Confirm cancelling a run: restates spend so far, then one keyed POST `runs.cancel`.

The run keeps spending while the operator reads this: the run screen pushes the run's
`Progress` into `progress` while the modal is open, so *Spent so far* follows it.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ito_tui.client.errors import Conflict, ItoError
from ito_tui.contract import Run, Spend
from ito_tui.format import fixed, usd
from ito_tui.state.views import Progress
from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.steady_footer import SteadyFooter
from ito_tui.tui.widgets.steady_input import SteadyInput


def spend_text(spend: Spend | None, progress: Progress | None = None) -> Text:
    """`Spent so far: $846.42 of a $2,000.00 budget (12.5 GPU-h)…`: the live `progress`'s
    spend where the run screen gives one, else the snapshot's `spend`."""
    spent: Decimal | None = progress.usd_spent if progress is not None else None
    budget: Decimal | None = progress.budget_usd if progress is not None else None
    if spend is not None:
        spent = spent if spent is not None else spend.usd_spent
        budget = budget if budget is not None else spend.budget_usd
    if spent is None or budget is None:
        return Text("Spend so far is not known yet.")
    # The spend record's GPU-hours are of its own moment: beside a live amount they would
    # read as current when they are not.
    hours = ""
    if spend is not None and spend.usd_spent == spent:
        hours = f" ({fixed(spend.gpu_hours, 1, grouping=True)} GPU-h)"
    return Text(
        f"Spent so far: {usd(spent)} of a {usd(budget)} budget{hours}. "
        "Cancelling stops the run; what was spent stays spent."
    )


class CancelRunModal(StyledOnFirstShow, ModalScreen[Run | None]):
    """Asks before cancelling. Default focus is *Keep running*; Esc keeps it running."""

    AUTO_FOCUS = "#keep"  # focused as shown (see ProposalModal)

    DEFAULT_CSS = """
    CancelRunModal { align: center middle; }
    CancelRunModal > #cancel-box {
        width: 100%; max-width: 76; height: auto;
        border: thick $gate-failed; background: $surface; padding: 0 1;
    }
    CancelRunModal #cancel-title { text-style: bold; }
    CancelRunModal Input { margin-top: 1; }
    CancelRunModal Horizontal { height: auto; margin-top: 1; }
    CancelRunModal Button { margin-right: 2; }
    CancelRunModal #confirm-cancel { background: $gate-failed 40%; }
    CancelRunModal Button:focus { text-style: bold reverse; }
    """

    BINDINGS = [
        Binding(
            "escape",
            "keep",
            "Keep running",
            id="cancel.keep",
            tooltip="Close; the run keeps running",
        )
    ]

    spend: reactive[Spend | None] = reactive(None, init=False)
    """The run's spend record (budget, GPU-hours), as last known."""
    progress: reactive[Progress | None] = reactive(None, init=False)
    """The run's live step and spend (the run screen pushes it while this is open)."""

    def __init__(
        self, run_id: str, spend: Spend | None, *, progress: Progress | None = None
    ) -> None:
        super().__init__()
        self.run_id = run_id
        self.set_reactive(CancelRunModal.spend, spend)
        self.set_reactive(CancelRunModal.progress, progress)
        self._shown = spend_text(spend, progress).plain
        self._key = str(uuid.uuid4())
        self._busy = False
        self._spend_line: Static | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="cancel-box"):
            yield Static(Text(f"Cancel run {safe(self.run_id)}?"), id="cancel-title")
            self._spend_line = Static(
                spend_text(self.spend, self.progress), id="cancel-spend", markup=False
            )
            yield self._spend_line
            yield SteadyInput(
                compact=True,
                placeholder="reason (optional, recorded)",
                id="cancel-reason",
                max_length=2000,
            )
            yield Static(id="cancel-error", markup=False)
            with Horizontal():
                yield Button("Keep running", id="keep", compact=True)
                yield Button("Cancel run", id="confirm-cancel", compact=True)
        yield SteadyFooter()

    def watch_spend(self) -> None:
        self._spend_changed()

    def watch_progress(self) -> None:
        self._spend_changed()

    def _spend_changed(self) -> None:
        text = spend_text(self.spend, self.progress)
        line = self._spend_line
        # The run screen pushes the spend at every repaint while the modal is attached, also
        # while it closes: its lines may be gone already (a query raised NoMatches then).
        if line is not None and line.is_mounted and text.plain != self._shown:
            # An update lays the modal out, so on change only.
            self._shown = text.plain
            line.update(text)

    def action_keep(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#keep")
    def _keep(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#confirm-cancel")
    def _confirm(self) -> None:
        if self._busy or shell(self).session.read_only:
            return
        self._busy = True
        self.query_one("#confirm-cancel", Button).disabled = True
        self._post(self.query_one("#cancel-reason", Input).value.strip() or None)

    @work(exclusive=True, group="cancel-run", exit_on_error=False)
    async def _post(self, reason: str | None) -> None:
        error = self.query_one("#cancel-error", Static)
        try:
            run = await shell(self).client.cancel_run(
                self.run_id, reason=reason, idempotency_key=self._key
            )
        except Conflict as exc:
            error.update(Text(f"Not cancelled: {safe(str(exc))}"))
            return
        except ItoError as exc:
            error.update(Text(f"Could not cancel: {safe(str(exc))}. Press again to retry."))
            self._busy = False
            self.query_one("#confirm-cancel", Button).disabled = False
            return
        self.notify(f"Cancel requested for {safe(self.run_id)}.", markup=False)
        self.dismiss(run)
