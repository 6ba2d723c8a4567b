"""Runs lent to a screen: the watcher takes their events from it, not from its own stream.

A pipeline screen follows its run's stream anyway. While it is open the app lends the run
to it (`RunsWatcher.lend`), so the run is followed once, not twice: one connection, one
parse and one state per event (a second stream doubled the work of the run the operator
watches, and a rate-limited proxy's burst went to whichever stream asked first). The
screen hands each event it applied as new to `RunsWatcher.observe`; the watcher keeps the
run's pending proposals, what was missed and its silence as for a run it follows — but
raises no `alert_for` alert: the screen raises those, through the same router. After
`give_back` the next poll (at once) follows the run again from its snapshot.

`Lending` is that part of `RunsWatcher`; `Loans` its bookkeeping: per lent run its
silence clock and its latest state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ito_tui.client import ItoError
from ito_tui.contract import Run
from ito_tui.textsafe import one_line

from .silence import SilenceClock

if TYPE_CHECKING:
    from ito_tui.contract import EventBase
    from ito_tui.state import RunState

    from .model import Alert

__all__ = ["Lending", "Loans"]

log = logging.getLogger("ito_tui.alerting.watcher")


@dataclass
class _Loan:
    clock: SilenceClock
    state: RunState | None = None
    """The run's state after the latest event its lender handed over."""


class Loans:
    """The runs lent to screens (see the module docstring)."""

    def __init__(self, stall_after_s: float) -> None:
        self.stall_after_s = stall_after_s
        self._loans: dict[str, _Loan] = {}

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._loans

    def __len__(self) -> int:
        return len(self._loans)

    def open(self, run_id: str, now: float) -> bool:
        """Lend `run_id` (local time `now`); False if it is lent already."""
        if run_id in self._loans:
            return False
        self._loans[run_id] = _Loan(SilenceClock(self.stall_after_s, now))
        return True

    def close(self, run_id: str) -> bool:
        """End the loan of `run_id`; False if it was not lent."""
        return self._loans.pop(run_id, None) is not None

    def observe(self, run_id: str, event: EventBase, state: RunState, now: float) -> bool:
        """Take an event the lender applied; True when it starts a silent spell."""
        loan = self._loans[run_id]
        loan.state = state
        return loan.clock.observe(event, now, state=state.state, stage=state.current_stage)

    def clocks(self) -> list[SilenceClock]:
        """Every lent run's silence clock."""
        return [loan.clock for loan in self._loans.values()]

    def clock(self, run_id: str) -> SilenceClock | None:
        """The silence clock of lent `run_id` (None: not lent)."""
        loan = self._loans.get(run_id)
        return loan.clock if loan is not None else None

    def silent_ids(self) -> frozenset[str]:
        """The lent runs in a silent spell now."""
        return frozenset(r for r, loan in self._loans.items() if loan.clock.silent)

    def silent(self, now: float) -> list[RunState]:
        """The lent runs whose silent spell starts now, with no event since (the lender's
        stream counts as connected: it says so itself when it is not)."""
        found = []
        for loan in self._loans.values():
            state = loan.state
            if state is not None and loan.clock.check(
                now, state=state.state, stage=state.current_stage, live=True
            ):
                found.append(state)
        return found


class Lending:
    """`RunsWatcher`'s runs lent to screens (mixed in; see the module docstring)."""

    _loans: Loans
    _followers: dict[str, Any]
    _wake: asyncio.Event
    _sleep_until: float
    _poll_soon: bool
    _lent_tasks: set[asyncio.Task[None]]
    """Snapshot reconciliations of lent runs in flight (cancelled with the followers)."""

    # What the lending methods use of the watcher (defined there).
    def _emit(self, alert: Alert) -> None:
        raise NotImplementedError

    def _silent_alert(self, state: RunState) -> Alert:
        raise NotImplementedError

    def _proposal_event(self, event: EventBase, state: RunState) -> None:
        raise NotImplementedError

    async def _reconcile(self, run_id: str, run: Run, stage: str | None) -> None:
        raise NotImplementedError

    def lend(self, run_id: str, snapshot: Run | None = None) -> None:
        """A screen follows `run_id` itself and hands its new events to `observe`: the
        watcher's own follower stops, and none starts while it is lent. `snapshot`, the
        screen's, tells what is pending now (a screen may lend first and give its
        snapshot once it has read it: `lend` again)."""
        loop = asyncio.get_running_loop()
        if self._loans.open(run_id, loop.time()):
            follower = self._followers.get(run_id)
            if follower is not None and follower.task is not None:
                follower.task.cancel()
        if snapshot is not None:
            self._spawn(loop, self._reconcile_lent(run_id, snapshot, snapshot.current_stage))

    def observe(self, run_id: str, event: EventBase, state: RunState) -> None:
        """An event the lender of `run_id` applied as new (`state`: the run's after it):
        pending, missed and silence as for a followed run; no `alert_for` alert."""
        if run_id not in self._loans:
            return
        loop = asyncio.get_running_loop()
        clock = self._loans.clock(run_id)
        was_silent = clock is not None and clock.silent
        if self._loans.observe(run_id, event, state, loop.time()):
            self._emit(self._silent_alert(state))
        if clock is not None:
            self._clock_moved(clock, was_silent)
        self._proposal_event(event, state)
        snapshot = getattr(event, "data", None) if event.type == "resync" else None
        if isinstance(snapshot, Run):
            self._spawn(loop, self._reconcile_lent(run_id, snapshot, state.current_stage))

    def _clock_moved(self, clock: SilenceClock, was_silent: bool) -> None:
        """After an event: wake the watcher's loop if a spell began or ended (it publishes
        that) or the clock's check is now due before the loop's planned wake-up."""
        due = clock.due()
        if clock.silent != was_silent or (due is not None and due < self._sleep_until):
            self._wake.set()

    def silence(self, run_id: str) -> SilenceClock | None:
        """The silence clock of `run_id`, lent or followed (None: neither, or not yet):
        the one detector, read by the run screen's banner."""
        clock = self._loans.clock(run_id)
        if clock is None and (follower := self._followers.get(run_id)) is not None:
            clock = follower.clock
        return clock

    def silent_runs(self) -> frozenset[str]:
        """The runs, followed or lent, in a silent spell now."""
        followed = (r for r, f in self._followers.items() if f.clock is not None and f.clock.silent)
        return self._loans.silent_ids() | frozenset(followed)

    def give_back(self, run_id: str) -> None:
        """The screen no longer follows `run_id`: the next poll, at once, follows it."""
        if self._loans.close(run_id):
            self._poll_soon = True
            self._wake.set()

    def _spawn(self, loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, None]) -> None:
        task = loop.create_task(work)
        self._lent_tasks.add(task)
        task.add_done_callback(self._lent_tasks.discard)

    async def _reconcile_lent(self, run_id: str, run: Run, stage: str | None) -> None:
        try:
            await self._reconcile(run_id, run, stage)
        except ItoError as exc:
            log.info("pending proposals of %s not read (%s)", one_line(run_id, max_len=80), exc)
