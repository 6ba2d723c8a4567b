"""BookingsScreen: pick a completed booking to train on; see its nodes and SSH access.

This app never books, reserves or buys: with no completed booking the screen
says one from ito-compute is needed and offers nothing that proceeds.

A booking held by a run (`busy run_…`) is free again once that run ends, so the list is
fetched again whenever the picker comes back on top, and polled (`poll_interval`, one
request at a time) while it shows a busy booking; a poll that brings nothing new leaves
the table as drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Static
from textual.worker import Worker

from ito_tui.format import duration, fixed, general
from ito_tui.textsafe import safe
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.messages import BookingChosen, Connected, Reconnected, RunChosen
from ito_tui.tui.screens.connect import connection_step
from ito_tui.tui.session import poll_interval, shell
from ito_tui.tui.widgets.booking_detail import BookingDetail, ssh_command, unavailable_reason
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from ito_tui.contract import Booking

_FABRIC = {"infiniband": "IB", "roce": "RoCE", "ethernet": "Eth"}
_ORDER = {"completed": 0, "pending": 2, "expired": 3, "cancelled": 4}
EMPTY_MESSAGE = (
    "No completed booking. ito-tui trains only on a completed booking from "
    "ito-compute: book GPU nodes there first, then press r here. "
    "This app never books, reserves or buys compute."
)


def sort_key(booking: Booking) -> tuple[int, float, str]:
    """Bookings that can take a run first, then busy ones, then the rest; soonest end first."""
    rank = _ORDER.get(str(booking.status), 5)
    if rank == 0 and booking.active_run_id:
        rank = 1
    return rank, booking.ends_at.timestamp(), booking.booking_id


def _busy(booking: Booking) -> bool:
    return str(booking.status) == "completed" and bool(booking.active_run_id)


def _status_word(booking: Booking) -> str:
    status = str(booking.status)
    if status == "completed":
        return f"busy {booking.active_run_id}" if booking.active_run_id else "ready"
    return status


def health_word(booking: Booking) -> str:
    """`✗ 1 unhealthy` when a node of the booking is unhealthy, else empty: the row says
    it, not only the detail pane (which names the node)."""
    sick = sum(1 for node in booking.nodes if not node.healthy)
    return f"✗ {sick:,} unhealthy" if sick else ""


def status_cell(booking: Booking, style: str, sick_style: str) -> Text:
    """The `Run / status` cell: the status, with the health mark in the failed colour. A
    ready booking's mark takes the place of `ready` (not dimmed, it can still take a run:
    the planner leaves the node out), so the row fits 80 columns."""
    word, health = _status_word(booking), health_word(booking)
    cell = Text(style=style)
    if word != "ready" or not health:
        cell.append(safe(word))
    if health:
        cell.append(" · " if cell.plain else "")
        cell.append(health, style=sick_style)
    return cell


class BookingTable(DataTable[Text]):
    """The bookings. Enter trains on the row under the cursor.

    A binding of the table itself rather than a priority binding of the screen: a
    priority binding runs before the table has handled the keys that came before it,
    so arrows and Enter arriving in one burst (typed fast, or over a slow ssh link)
    trained on the row the cursor started on. The table's own Enter would hide it
    from the footer.
    """

    BINDINGS = [
        Binding(
            "enter",
            "train",
            "Train",
            id="bookings.train",
            tooltip="Open the training spec form for the highlighted booking",
        ),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "train":
            return self.screen.check_action(action, parameters)  # the picker decides
        return super().check_action(action, parameters)

    def action_train(self) -> None:
        picker = self.screen
        if isinstance(picker, BookingsScreen):
            picker.action_train()


class BookingsScreen(StyledOnFirstShow, Screen[None]):
    """A DataTable of bookings and a detail pane for the highlighted one."""

    TITLE = "Bookings"
    CSS_PATH = "bookings.tcss"
    DEFAULT_CSS = "BookingsScreen > .bookings--unhealthy { color: $gate-failed; text-style: bold; }"
    COMPONENT_CLASSES = {"bookings--unhealthy"}

    BINDINGS = [
        # Enter ("train") is a binding of the table: see BookingTable.
        Binding(
            "c",
            "copy_ssh",
            "Copy ssh",
            id="bookings.copy_ssh",
            tooltip="Copy the ssh command for the head node to the clipboard (OSC 52)",
        ),
        Binding(
            "h",
            "toggle_unavailable",
            "Hide unusable",
            id="bookings.toggle_unavailable",
            tooltip="Hide or show bookings that cannot take a run",
        ),
        Binding(
            "r",
            "refresh",
            "Refresh",
            id="bookings.refresh",
            tooltip="Fetch the bookings again",
        ),
    ]

    def __init__(self, *, highlight: str | None = None) -> None:
        super().__init__()
        self.bookings: list[Booking] = []
        self.show_unavailable = True
        self.loaded = False
        self._highlight = highlight
        self._poll: Timer | None = None

    def compose(self) -> ComposeResult:
        session = shell(self).session
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection=session.connection,
            demo=session.demo,
            read_only=session.read_only,
            title="Bookings",
        )
        with Vertical(id="bookings-body"):
            with Vertical(id="bookings-list"):
                yield Static("Loading bookings …", id="bookings-summary")
                yield Static(Content.styled(EMPTY_MESSAGE, "$needs-human"), id="bookings-empty")
                yield BookingTable(id="bookings-table", cursor_type="row", zebra_stripes=False)
            with VerticalScroll(id="bookings-detail"):
                yield BookingDetail(id="booking-detail")
        yield SteadyFooter()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Booking", "GPU", "N×G", "Fabric", "Ends in", "$/GPU-h", "Run / status")
        self.query_one(BookingDetail).now = shell(self).session.clock()
        if shell(self).session.capabilities is None:
            self.connect()
        else:
            self.action_refresh()

    def on_screen_resume(self) -> None:
        # Back on top (a run screen, the form or the runs list closed): what it shows may
        # have changed meanwhile, above all a run that ended and freed its booking.
        if self.loaded:
            self.action_refresh()

    def on_screen_suspend(self) -> None:
        self._stop_polling()

    def _stop_polling(self) -> None:
        if self._poll is not None:
            self._poll.stop()
            self._poll = None

    # ------------------------------------------------------------ data

    def connect(self) -> None:
        """Run the connection step, then load the bookings (the app may show more first)."""
        host = shell(self).session.backend_host
        self.query_one("#bookings-summary", Static).update(
            Content.assemble("Connecting to ", (host, "bold"), " …")
        )
        # Paint first, connect after: this frame never waits on the network.
        self.call_after_refresh(self._start_connecting)

    def _start_connecting(self) -> None:
        self.run_worker(self._connect(), group="bookings", exclusive=True, exit_on_error=False)

    async def _connect(self) -> None:
        outcome = await connection_step(shell(self))
        self.post_message(outcome)
        if isinstance(outcome, Connected):
            await self._load()

    def on_reconnected(self, event: Reconnected) -> None:
        """Connected again in place (ctrl+l): fetch the bookings again."""
        self.action_refresh()

    def action_refresh(self) -> None:
        """Fetch bookings (one request at a time; a new press replaces an old one)."""
        if shell(self).session.capabilities is None:
            self.connect()
            return
        self.run_worker(self._load(), group="bookings", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        self._stop_polling()
        bookings = await shell(self).client.bookings()
        self.set_bookings(bookings)
        if any(_busy(b) for b in self.bookings) and self.app.screen is self:
            # Armed only once this fetch is done: polls never overlap.
            self._poll = self.set_timer(poll_interval(self), self.action_refresh)

    def set_bookings(self, bookings: list[Booking]) -> None:
        """Show `bookings` (sorted: usable first); the same bookings again change nothing."""
        ordered = sorted(bookings, key=sort_key)
        if self.loaded and ordered == self.bookings and self._highlight is None:
            return
        self.bookings = ordered
        self.loaded = True
        self._fill()

    def _visible(self) -> list[Booking]:
        if self.show_unavailable:
            return self.bookings
        return [b for b in self.bookings if unavailable_reason(b) is None]

    def _fill(self) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        keep = self._highlight or self._current_id()
        self._highlight = None
        table.clear()
        now = shell(self).session.clock()
        sick = str(self.get_component_rich_style("bookings--unhealthy", partial=True))
        for booking in self._visible():
            usable = unavailable_reason(booking) is None
            style = "" if usable else "dim"
            seconds = (booking.ends_at - now).total_seconds()
            if str(booking.status) == "cancelled":
                window = "—"  # a cancelled booking's window is nobody's any more
            else:
                window = duration(seconds) if seconds > 0 else "ended"
            cells = (
                safe(booking.booking_id),
                safe(booking.gpu_sku.split("-")[0]),
                f"{booking.node_count}×{booking.gpus_per_node}",
                f"{_FABRIC.get(str(booking.fabric.kind), safe(booking.fabric.kind))} "
                f"{general(booking.fabric.gbit_per_s_per_gpu, 6)}G",
                window,
                fixed(booking.price_usd_per_gpu_hour, 2),
            )
            row = [Text(cell, style=style) for cell in cells]
            row.append(status_cell(booking, style, sick))
            table.add_row(*row, key=booking.booking_id)
        usable_count = sum(1 for b in self.bookings if unavailable_reason(b) is None)
        hidden = len(self.bookings) - len(self._visible())
        summary = f"{usable_count} of {len(self.bookings)} bookings can take a run"
        if hidden:
            summary += f" · {hidden} hidden (h shows them)"
        self.query_one("#bookings-summary", Static).update(summary)
        self.set_class(usable_count == 0, "-empty")
        ids = [b.booking_id for b in self._visible()]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        self._show_detail()
        self.refresh_bindings()
        # Textual 8.2.8's DataTable measures new rows when idle, and a paint before that
        # (the notice coming with `-empty`) leaves the header at its labels' widths until
        # the table is painted again: once more after this refresh (test_no_completed_bookings).
        self.call_after_refresh(table.refresh)

    def _current_id(self) -> str | None:
        table: DataTable[Text] = self.query_one(DataTable)
        visible = self._visible()
        if not visible or table.row_count == 0:
            return None
        row = min(table.cursor_row, len(visible) - 1)
        return visible[row].booking_id if row >= 0 else None

    def current(self) -> Booking | None:
        """The highlighted booking, if any."""
        current_id = self._current_id()
        return next((b for b in self.bookings if b.booking_id == current_id), None)

    def highlight(self, booking_id: str) -> None:
        """Move the cursor to `booking_id` (showing unusable bookings if needed)."""
        if not self.loaded:
            self._highlight = booking_id
            return
        self.show_unavailable = True
        self._highlight = booking_id
        self._fill()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self._show_detail()
        self.refresh_bindings()

    def _show_detail(self) -> None:
        detail = self.query_one(BookingDetail)
        detail.now = shell(self).session.clock()
        detail.booking = self.current()

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        booking = self.current()
        if action == "train":
            if booking is None:
                return False
            if shell(self).session.read_only:
                # Watching is allowed: Enter opens the run on a busy booking, nothing else.
                return _busy(booking)
            if not any(unavailable_reason(b) is None for b in self.bookings):
                return False  # the empty state: nothing here proceeds
            # Shown but disabled on a booking that cannot take a run (its reason is on
            # screen); on a busy one Enter opens the run that holds it.
            return True if unavailable_reason(booking) is None or _busy(booking) else None
        if action == "copy_ssh":
            return booking is not None and bool(booking.nodes)
        return True

    def action_train(self) -> None:
        booking = self.current()
        if booking is None:
            return
        if booking.active_run_id and _busy(booking):
            self.notify(
                f"{safe(booking.booking_id)} is busy with {safe(booking.active_run_id)}: "
                "opening that run.",
                markup=False,
            )
            self.post_message(RunChosen(booking.active_run_id))
            return
        if shell(self).session.read_only:
            self.notify("Read-only mode: starting runs is disabled.", severity="warning")
            return
        reason = unavailable_reason(booking)
        if reason is not None:
            self.notify(
                f"Cannot train on this booking: {reason}.", severity="warning", markup=False
            )
            return
        self.post_message(BookingChosen(booking))

    def action_copy_ssh(self) -> None:
        booking = self.current()
        command = ssh_command(booking) if booking else None
        if booking is None or command is None:
            return
        self.app.copy_to_clipboard(command)
        self.notify(f"Copied: {command}", title="Clipboard (OSC 52)", markup=False)

    def action_toggle_unavailable(self) -> None:
        self.show_unavailable = not self.show_unavailable
        self._fill()
