"""ConfirmSubmitModal: restate what a submission commits to before it is sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ito_tui.format import count, duration_h, usd
from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from ito_tui.contract import Booking, Estimate, TrainingSpec

_POST = {None: "none", "sft": "SFT", "dpo": "SFT → DPO", "rlvr": "SFT → DPO → RLVR"}


def summary_lines(spec: TrainingSpec, booking: Booking, estimate: Estimate) -> list[Content]:
    """What the confirmation restates: booking, model, data, budget and the p50/p90 cost."""

    def row(label: str, value: str, style: str = "") -> Content:
        return Content.assemble((f"{label:<12}", "$text-muted"), (value, style))

    post = _POST.get(str(spec.post_training) if spec.post_training else None, "?")
    tokens = f" · {count(spec.target_tokens)} tokens" if spec.target_tokens else ""
    return [
        row(
            "Booking",
            f"{safe(booking.booking_id)} · {safe(booking.gpu_sku)} · "
            f"{booking.node_count}×{booking.gpus_per_node} GPUs",
        ),
        row("Model", f"{safe(spec.model_size)}{tokens} · seq {spec.seq_len:,}", "bold"),
        row("Data", f"{safe(spec.data_ref)} ({safe(spec.data_kind)})"),
        row("Target", f"{safe(spec.target_capability)} · post-training {post}"),
        row("Budget", f"{usd(spec.budget_usd)} ceiling", "bold"),
        row("Cost", f"p50 {usd(estimate.usd_p50)} · p90 {usd(estimate.usd_p90)}", "bold"),
        row(
            "Wall clock",
            f"p50 {duration_h(estimate.wall_clock_h_p50)} · "
            f"p90 {duration_h(estimate.wall_clock_h_p90)}",
        ),
    ]


class ConfirmSubmitModal(StyledOnFirstShow, ModalScreen[bool]):
    """Dismisses True only on an explicit "Submit run"; Esc and Cancel send nothing."""

    AUTO_FOCUS = "#confirm-submit"  # focused as shown (see ProposalModal)

    CSS_PATH = "confirm_submit.tcss"

    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="confirm.cancel",
            tooltip="Go back to the form; nothing is sent",
        ),
    ]

    def __init__(self, spec: TrainingSpec, booking: Booking, estimate: Estimate) -> None:
        super().__init__()
        self.spec = spec
        self.booking = booking
        self.estimate = estimate
        self._answered = False

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="dialog"):
            yield Static(Content.styled("Submit this training run?", "bold"), id="confirm-title")
            yield Static(
                Content("\n").join(summary_lines(self.spec, self.booking, self.estimate)),
                id="confirm-summary",
            )
            yield Static(
                Content.styled(
                    "Spend accrues against the booking while the run holds it. "
                    "Stage gates stop the run if an eval fails.",
                    "$text-muted",
                ),
                id="confirm-note",
            )
            with Horizontal(id="confirm-buttons", classes="dialog-buttons"):
                yield Button("Submit run", id="confirm-submit", variant="success")
                yield Button("Cancel", id="confirm-cancel")
        yield SteadyFooter()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._answer(event.button.id == "confirm-submit")

    def action_cancel(self) -> None:
        self._answer(False)

    def _answer(self, submit: bool) -> None:
        # A second press while the modal closes must not answer twice.
        if self._answered:
            return
        self._answered = True
        self.dismiss(submit)
