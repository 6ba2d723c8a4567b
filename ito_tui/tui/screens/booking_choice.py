"""Pick a booking for a new run from an old run's spec, when that run's booking cannot take
it (busy, expired): the completed, idle bookings, one a line; Enter picks, Esc sends nothing.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ito_tui.contract import Booking
from ito_tui.format import ends_in
from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.widgets.steady_footer import SteadyFooter


def booking_line(b: Booking, now: datetime) -> Text:
    """`bk_h100_4n_ib  H100 4×8 · ends in 3d04h` (`· ✗ 1 unhealthy` when a node is, as in
    the booking picker; the booking's strings literal)."""
    from ito_tui.tui.screens.bookings import health_word  # the picker's words (loaded)

    sku = safe(b.gpu_sku.split("-")[0])
    when = ends_in(b.ends_at, now)
    line = f"{safe(b.booking_id)}  {sku} {b.node_count}×{b.gpus_per_node} · {when}"
    sick = health_word(b)
    return Text(f"{line} · {sick}" if sick else line)


NO_FREE_BOOKING = (
    "No completed booking is free now: ito-compute books them (ito-tui never books). Esc closes."
)


class BookingChoice(StyledOnFirstShow, ModalScreen[Booking | None]):
    """The free completed bookings to put the new run on; dismisses with the one picked."""

    AUTO_FOCUS = "#booking-choices"

    DEFAULT_CSS = """
    BookingChoice { align: center middle; }
    BookingChoice > #choice-box {
        width: 100%; max-width: 76; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    BookingChoice #choice-title { text-style: bold; }
    BookingChoice #choice-why { color: $text-muted; }
    BookingChoice OptionList { height: auto; max-height: 12; margin-top: 1; }
    """

    BINDINGS = [
        Binding(
            "escape",
            "close",
            "Back",
            id="booking_choice.back",
            tooltip="Close; no form opens and nothing is sent",
        )
    ]

    def __init__(self, bookings: list[Booking], why: str, *, now: datetime) -> None:
        super().__init__()
        self.bookings = bookings
        self.why = why
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            yield Static("New run from this spec: pick a booking", id="choice-title")
            yield Static(Text(self.why), id="choice-why")
            if self.bookings:
                yield OptionList(
                    *(Option(booking_line(b, self.now), id=b.booking_id) for b in self.bookings),
                    id="booking-choices",
                )
            else:
                yield Static(
                    Text(NO_FREE_BOOKING),
                    id="booking-choices",
                )
        yield SteadyFooter()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        picked = next((b for b in self.bookings if b.booking_id == event.option.id), None)
        self.dismiss(picked)

    def action_close(self) -> None:
        self.dismiss(None)
