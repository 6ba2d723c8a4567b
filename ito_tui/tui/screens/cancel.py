"""Confirm cancelling a run: restates spend so far, then one keyed POST `runs.cancel`."""

from __future__ import annotations

import uuid
from decimal import Decimal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ito_tui.client.errors import Conflict, ItoError
from ito_tui.contract import Run, Spend
from ito_tui.format import fixed
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.runfmt import safe, usd


def spend_text(spend: Spend | None, spent: Decimal | None) -> Text:
    if spend is None:
        return Text("Spend so far is not known yet.")
    amount = spent if spent is not None else spend.usd_spent
    return Text(
        f"Spent so far: {usd(amount)} of a {usd(spend.budget_usd)} budget "
        f"({fixed(spend.gpu_hours, 1, grouping=True)} GPU-h). "
        "Cancelling stops the run; what was spent stays spent."
    )


class CancelRunModal(ModalScreen[Run | None]):
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

    def __init__(self, run_id: str, spend: Spend | None, *, spent: Decimal | None = None) -> None:
        super().__init__()
        self.run_id = run_id
        self.spend = spend
        self.spent = spent
        self._key = str(uuid.uuid4())
        self._busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="cancel-box"):
            yield Static(Text(f"Cancel run {safe(self.run_id)}?"), id="cancel-title")
            yield Static(spend_text(self.spend, self.spent), id="cancel-spend")
            yield Input(
                compact=True,
                placeholder="reason (optional, recorded)",
                id="cancel-reason",
                max_length=2000,
            )
            yield Static(id="cancel-error", markup=False)
            with Horizontal():
                yield Button("Keep running", id="keep", compact=True)
                yield Button("Cancel run", id="confirm-cancel", compact=True)

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
