"""The run screen's Logs tab: the run's job log (API.md v1.1 `runs.logs`), live and searchable.

`LogsPane` holds one bounded `state.LogBuffer` and a `LogView` over it. While the tab is
shown its stream worker (`tui/run_logs.py: LogFollower`) follows the run's log into the
buffer; while hidden the stream is closed (a hidden view costs nothing, bench #14), and
on show it resumes after the last line held, or starts again from the newest lines when
the gap would not fit the buffer. The view repaints at most 5 times a second
(`LOG_INTERVAL_S`), however fast lines come.

Keys (the pane's own while it has the focus): End follows, up/PgUp scroll back (which
pauses following, and the caption says so), `/` searches with `n`/`N` for the next
and previous match, `e` jumps to the first error, `l` and `s` cycle the level and the
source filter, `r` asks for ranks, `c` clears the filters. A filter is applied by the
server (the stream and the pages are asked again with it), so the buffer holds only what
matches and the ring is never spent on lines the operator filtered out.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Static
from textual.worker import NoActiveWorker, get_current_worker

from ito_tui.client import CapabilityMissing, ItoError
from ito_tui.format import integer, stamps, when
from ito_tui.state.logbuffer import LogBuffer, LogFilter
from ito_tui.textsafe import one_line
from ito_tui.tui.repaint import Repaints
from ito_tui.tui.run_follow import connection_label
from ito_tui.tui.run_logs import MAX_BYTES, MAX_LINES, LogFollower, new_buffer
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.log_view import LogView
from ito_tui.tui.widgets.logs_keys import LogsKeys
from ito_tui.tui.widgets.steady_input import SteadyInput

if TYPE_CHECKING:
    from ito_tui.client import ConnectionState

__all__ = ["ABSENT", "KEEP_ROWS", "LOG_INTERVAL_S", "LogsPane"]

ABSENT = "not offered by this backend (capability runs.logs)"
KEEP_ROWS = 100
"""A paused view keeps this many lines above what it shows before the ring may evict."""
LOG_INTERVAL_S = 0.2
"""The lines repaint at most 5 times a second. A line after a quiet spell shows at once
(the scheduler's leading edge); only a burst waits, and a burst is faster than anyone
reads: in a 12,000 lines/s flood each repaint replaces every row, and 10 a second cost
~8 % of a core more than 5 (bench 18.13), for text no one can follow at either rate."""


class LogsPane(LogsKeys):
    """The job log of run `run_id`: follows the log stream while shown."""

    DEFAULT_CSS = """
    LogsPane { height: 1fr; }
    LogsPane > #logs-caption {
        height: 1; padding: 0 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis;
    }
    LogsPane > Input { height: 1; border: none; padding: 0 1; background: $boost; display: none; }
    LogsPane > #logs-absent { padding: 1; color: $text-muted; }
    """

    def __init__(self, run_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_id = run_id
        self.filter = LogFilter()
        self.buffer = new_buffer()
        self.view = LogView(
            self.buffer, on_follow=self._follow_changed, on_scroll=self._caption, id="logs-view"
        )
        self.follower: LogFollower | None = None
        self.repaints = Repaints(self)
        self.repaints.panel("view", self._paint, interval=LOG_INTERVAL_S, visible=self._shown)
        self.shown = False
        """Whether the tab is on display (its stream runs only then)."""
        self.offered = True
        """False once the backend said it has no `runs.logs`."""
        self.ended = False
        """The run's log ended (the run is over and every line was read)."""
        self.detached = False
        """The buffer does not reach the newest lines (a jump back, or no room while
        paused): End starts again from the newest."""
        self.new = 0
        """Lines that came in while paused."""
        self.label = ""
        """What the view was opened at (a fault), for the caption."""
        self.note = ""
        """The latest answer to a key (no match, no error held, a bad rank list)."""
        self.connection = ""
        self.positioned = False
        """The buffer was opened at a line (a fault's time, a match far back)."""
        self.streaming = False
        """A stream worker is reading into the buffer (End need not start one)."""
        self._streams = 0
        """Streams started or cancelled (each worker's ticket): only the newest one, when it
        stops, says no stream is reading."""
        self._shift = 0
        self._marked = False
        """A repaint is asked for already (a flood marks it once, not once a line)."""
        self._caption_line = Static(id="logs-caption", markup=False)
        self._caption_text = ""

    def compose(self) -> ComposeResult:
        caps = shell(self).session.capabilities
        if caps is not None and not caps.has("runs.logs"):
            self.offered = False
        yield self._caption_line
        yield SteadyInput(placeholder="search the log (Enter)", id="logs-search")
        yield SteadyInput(placeholder="ranks, e.g. 0,3,8-11 (Enter; empty: all)", id="logs-ranks")
        yield Static(ABSENT, id="logs-absent", markup=False)
        yield self.view

    def on_mount(self) -> None:
        self._offer()

    def _offer(self) -> None:
        self.query_one("#logs-absent").display = not self.offered
        self._caption_line.display = self.offered
        self.view.display = self.offered
        if self.offered:
            self._caption()

    def focus(self, scroll_visible: bool = True) -> LogsPane:
        # The tab's key taker (`RunActions.action_tab`): the lines take the keys (none
        # while the backend has no log to give: the keys stay where they were).
        if self.offered:
            self.view.focus(scroll_visible)
        return self

    def show_around(self, when: datetime, label: str = "") -> None:
        """Show the lines around `when` (a fault, a gate result), follow mode off."""
        self.label = one_line(label, 60)
        self.view.set_following(False)
        index = self.buffer.index_at(when)
        # At index 0 the line at `when` may be older than the buffer: ask the server.
        at_start = self.follower is not None and self.follower.at_start
        if index is not None and (index > 0 or at_start):
            self.view.show_line(index, around=True)
            self._caption()
        elif self.offered:
            self._jump_to_time(when)

    # ------------------------------------------------------------ shown / hidden

    def _shown(self) -> bool:
        return self.shown

    def on_show(self) -> None:
        self.shown = True
        self.repaints.shown()
        self._start()

    def on_hide(self) -> None:
        self.shown = False
        # A hidden tab costs nothing: its stream closes, and opens again on show.
        self.workers.cancel_group(self, "logs-stream")
        self._streams += 1
        self.streaming = False

    def _start(self, *, fresh: bool = False) -> None:
        if not (self.offered and self.shown) or (self.ended and not fresh):
            return
        if fresh:
            self._swap(new_buffer())
        elif self.detached:
            return  # paused on lines that do not reach the newest: End starts again
        # A buffer opened at a line (a fault) goes on from it, however far the newest is.
        self._streams += 1
        self.streaming = True  # from now: a second `_start` in this turn needs no second one
        self._stream(self._streams, resume=len(self.buffer) > 0, whole_gap=self.positioned)

    def _swap(self, buffer: LogBuffer, *, cancel: bool = True) -> None:
        """A new buffer (a filter, a jump, starting again from the newest); the stream
        into the old one is cancelled, unless it is the caller (`cancel=False`)."""
        if cancel:
            self.workers.cancel_group(self, "logs-stream")
            self._streams += 1
            self.streaming = False
        self.buffer = buffer
        self.follower = None
        self.ended = self.detached = self.positioned = False
        self.new = self._shift = 0
        self.view.set_source(buffer)

    def _follower(self) -> LogFollower:
        if self.follower is None or self.follower.buffer is not self.buffer:
            self.follower = LogFollower(
                shell(self).client, self.run_id, self.buffer, self, self.filter
            )
        return self.follower

    @work(group="logs-stream", exclusive=True, exit_on_error=False)
    async def _stream(self, ticket: int, *, resume: bool, whole_gap: bool = False) -> None:
        follower = self._follower()
        try:
            if resume and not whole_gap and not await follower.resumable():
                if follower is not self.follower:
                    return  # another buffer came while asking (a jump): it has its stream
                self._swap(new_buffer(), cancel=False)  # this worker goes on with a tail
                follower, resume = self._follower(), False
            since = follower.buffer.last_seq if resume else None
            ended = await follower.follow(since_seq=since)
        except CapabilityMissing:
            self.offered = False
            self._offer()
            return
        except ItoError as exc:
            self.connection = f"log stream: {one_line(str(exc), 80)}"
            self._caption()
            return
        finally:
            if ticket == self._streams:  # the newest stream stopped (not one it replaced)
                self.streaming = False
        if follower is self.follower:
            self.ended = ended
            self.detached = self.detached or not ended
            self.connection = ""
            self.repaints.mark("view")

    # ------------------------------------------------------------ LogSink (the follower)

    def added(self, evicted: int) -> None:
        self._shift -= evicted
        if not self.view.following:
            self.new += 1
        if not self._marked:
            self._marked = True
            self.repaints.mark("view")

    def room(self) -> bool:
        if self.view.following:
            return True
        buffer = self.buffer
        full = len(buffer) >= MAX_LINES or buffer.nbytes >= MAX_BYTES - 8192
        return not full or self.view.top_index + self._shift > KEEP_ROWS

    def connection_changed(self, state: ConnectionState) -> None:
        if state.status == "closed":
            return  # closed by this pane (hidden, a new buffer): said by the caption's state
        label = connection_label(state)
        label = "" if label == "live" else label
        if label != self.connection:
            self.connection = label
            self.repaints.mark("view")

    # ------------------------------------------------------------ paint

    def _paint(self) -> None:
        self._marked = False
        shift, self._shift = self._shift, 0
        self.view.sync(shift=shift)
        self._caption()

    def _caption(self) -> None:
        view = self.view
        if view.following:
            state = "log ended" if self.ended else "following"
        elif self.label:
            state = f"at {self.label} — End to follow"
        elif self.detached:
            state = "paused — End to follow (newer lines not loaded)"
        else:
            state = f"paused — End to follow, {integer(self.new)} new"
        parts = [state]
        if since := self._since():
            parts.append(since)  # before what a narrow pane cuts first
        if self.connection:
            parts.append(self.connection)
        parts.append(f"filter: {self.filter.words() or 'all'}")
        if view.needle:
            parts.append(f"/{view.needle}")
        if self.note:
            parts.append(self.note)
        text = " · ".join(parts)
        if text != self._caption_text:
            # One row, whatever it says: no layout of the whole screen for a new count.
            self._caption_text = text
            self._caption_line.update(text, layout=False)

    def _since(self) -> str:
        """`from Dec 4 06:29 UTC`: the top row's moment, when it is not today's (a row says
        only its time of day, on the run's clock); `Dec 04 23:58:10 → Dec 05 00:03:40 UTC`
        when the rows on screen cross midnight, so the rows below it are not read as the
        top row's day."""
        view, source = self.view, self.view.source
        if not len(source):
            return ""
        last = len(source) - 1
        top = source.line(min(view.top_index, last)).at
        bottom = source.line(min(view.bottom_index, last)).at
        now = shell(self).session.clock()
        day = top.astimezone(UTC).date()
        if bottom.astimezone(UTC).date() != day:
            first, end = stamps([top, bottom], now)
            return f"{first} → {end} UTC"
        if day == now.astimezone(UTC).date():
            return ""
        return f"from {when(top, now)}"

    def _follow_changed(self, following: bool) -> None:
        self.new = 0
        if following:
            self.label = self.note = ""
            if self._cancel_moves() and self.positioned and not self.streaming:
                self._start(fresh=True)  # a jump had emptied the buffer for its lines
            elif self.detached:
                self._start(fresh=True)
            elif not (self.ended or self.streaming) and self.shown:
                # The stream stopped (an error said in the caption): End tries again. A
                # stream still reading (paused with room) goes on: restarting it cost a
                # request and a reconnect per End (~35 ms before the caption showed).
                self._start()
        self._caption()

    def _cancel_moves(self) -> bool:
        """Cancel a jump or an older page still on its way: End, pressed meanwhile, wins
        (the answer would take the view back to where End left). True if one was."""
        try:
            current = get_current_worker()
        except NoActiveWorker:
            current = None
        moving = [
            w
            for w in self.workers
            if w.node is self and w.group == "logs-fetch" and w.is_running and w is not current
        ]
        for worker in moving:
            worker.cancel()
        return bool(moving)

    @on(LogView.ReachedTop)
    def _reached_top(self, event: LogView.ReachedTop) -> None:
        event.stop()
        self._older()

    @work(group="logs-fetch", exclusive=True, exit_on_error=False)
    async def _older(self) -> None:
        follower = self._follower()
        last = self.buffer.last_seq
        try:
            added = await follower.older()
        except ItoError as exc:
            self.note = f"older lines: {one_line(str(exc), 60)}"
            self._caption()
            return
        if last is not None and self.buffer.last_seq != last:
            self.detached = True  # the ring made room at the newest end
        self._shift += added
        self.repaints.mark("view")

    # ------------------------------------------------------------ jumps (time, match, error)

    @work(group="logs-fetch", exclusive=True, exit_on_error=False)
    async def _jump_to_time(self, when: datetime) -> None:
        try:
            seq = await self._follower().seq_at(when, below=self.buffer.first_seq)
        except ItoError as exc:
            self.note = f"log at that time: {one_line(str(exc), 60)}"
            self._caption()
            return
        if seq is None:
            self.view.set_following(True)  # nothing at or after `when` yet: the newest
            return
        await self._jump_to_seq(seq, around=True)

    async def _jump_to_seq(self, seq: int, *, around: bool = False) -> None:
        """Show line `seq` (older than the buffer) in a fresh buffer, paused; the stream
        fills the lines after it while there is room."""
        self._swap(new_buffer())
        self.positioned = True
        self.view.set_following(False)
        follower = self._follower()
        index = await follower.around(seq)
        self.view.sync()
        if index is not None:
            self.view.show_line(index, around=around)
        self._caption()
        # The lines after it come from the stream (resumed after `seq`), now or on show.
        self.detached = False
        self._start()
