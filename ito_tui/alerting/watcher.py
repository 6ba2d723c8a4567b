"""`RunsWatcher`: every active run's alerts, and what needs the operator, on any screen.

It lists the backend's runs every `poll_s` (never more than once a second; after an error
it backs off up to `MAX_BACKOFF_S`), follows each active run's event stream from its
snapshot on (so history raises nothing) with a `state.RunTracker`, and:

- hands `alert_for`'s alert of each new event to `on_alert`;
- keeps every pending proposal (from the snapshot and `proposal.*` events) and
  publishes them with the missed ones as `NeedsYou` through `on_change`;
- turns a proposal that left `pending` by expiry, or by a decision of anyone but
  `operator`, into a `MissedProposal` and a `proposal_missed` alert, also when it
  happened while no stream was followed (a resync, a dropped follower, a run that ended
  between two polls: its proposals are re-read);
- flags a run that is connected but makes no progress for `stall_after_s` (`silence`):
  an alert once per spell, `NeedsYou.silent` while it lasts. Checked at a poll or when a
  clock is due (`SilenceClock.due`; an event that brings that forward, or starts or ends a
  spell, wakes it), not every second (with the banner's, 3-10 % of the app's CPU, #4).

A run a screen follows itself is lent to it (`lend`, `observe`, `give_back`; see
`lending`): followed once, not twice. At most `max_followed` runs are followed (those
waiting for a decision first). A
follower that fails (404, a protocol error) drops its run, which is picked up again at
the next poll; an `AuthError` stops the watcher (`run` raises it). Deduplication across
restarts is the caller's (`SentLedger`): the watcher raises each event's alert once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ito_tui.client import AuthError, CapabilityMissing, ItoError
from ito_tui.client.backoff import floored_jitter
from ito_tui.contract import TERMINAL_RUN_STATES, Proposal, Run
from ito_tui.state import RunTracker
from ito_tui.textsafe import one_line

from .lending import Lending, Loans
from .model import Alert, alert_for
from .needs import (
    MAX_MISSED,
    MissedProposal,
    NeedsYou,
    PendingProposal,
    missed_alert,
    missed_from,
    pending_from,
)
from .silence import SilenceClock, next_due, silent_alert

if TYPE_CHECKING:
    from ito_tui.client.protocol import EventFeed, ItoApi
    from ito_tui.contract import EventBase, RunSummary
    from ito_tui.state import RunState

__all__ = ["MissedProposal", "NeedsYou", "PendingProposal", "RunsWatcher"]

log = logging.getLogger("ito_tui.alerting.watcher")

MIN_POLL_S = 1.0
MAX_BACKOFF_S = 300.0
_TERMINAL = frozenset(s.value for s in TERMINAL_RUN_STATES)
_MAX_SEEN = 4096


@dataclass
class _Follower:
    run_id: str
    task: asyncio.Task[None] | None = None
    tracker: RunTracker | None = None
    clock: SilenceClock | None = None
    stream: EventFeed | None = field(default=None, repr=False)


class RunsWatcher(Lending):
    """Follows every active run (or `runs`) for alerts; see the module docstring."""

    def __init__(
        self,
        client: ItoApi,
        *,
        on_alert: Callable[[Alert], None],
        on_change: Callable[[NeedsYou], None],
        operator: str | None = None,
        runs: Sequence[str] = (),
        poll_s: float = 10.0,
        max_followed: int = 32,
        stall_after_s: float = 600.0,
    ) -> None:
        self.client = client
        self.on_alert = on_alert
        self.on_change = on_change
        self.operator = operator
        self.only = frozenset(runs)
        self.poll_s = max(MIN_POLL_S, poll_s)
        self.max_followed = max(1, max_followed)
        self.stall_after_s = stall_after_s
        self.polls = 0
        """Runs lists read (for tests and the log)."""
        self.checks = 0
        """Silence checks made: one a poll or a clock due, not one a second (for tests)."""
        self._followers: dict[str, _Follower] = {}
        self._pending: dict[str, dict[str, PendingProposal]] = {}
        self._missed: deque[MissedProposal] = deque(maxlen=MAX_MISSED)
        self._missed_ids: OrderedDict[str, None] = OrderedDict()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._failing: set[str] = set()
        """Runs whose follower failed (logged once until one succeeds)."""
        self._needs = NeedsYou()
        self._fatal: BaseException | None = None
        self._wake = asyncio.Event()
        self._sleep_until = math.inf
        """When the loop wakes next unless woken (`Lending._clock_moved`)."""
        self._loans = Loans(stall_after_s)
        self._lent_tasks = set()
        self._poll_soon = False
        """A run was given back: list the runs at once, to follow it again."""

    def __repr__(self) -> str:
        return f"RunsWatcher({len(self._followers)} followed, {len(self._needs.pending)} pending)"

    @property
    def needs_you(self) -> NeedsYou:
        """Pending proposals across runs and the missed ones, as last published."""
        return self._needs

    @property
    def following(self) -> tuple[str, ...]:
        """The runs whose streams are followed now."""
        return tuple(self._followers)

    def mark_seen(self, proposal_id: str) -> None:
        """The operator has opened this proposal: if it expires, it did not expire unseen."""
        self._seen[proposal_id] = None
        while len(self._seen) > _MAX_SEEN:
            self._seen.popitem(last=False)

    def seen(self, proposal_id: str) -> bool:
        """Whether the operator was shown `proposal_id` (`mark_seen`; the latest ones kept)."""
        return proposal_id in self._seen

    # ------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Watch until cancelled; raises `AuthError` (or a missing `runs.read`)."""
        loop = asyncio.get_running_loop()
        await self._whoami()
        failures = 0
        next_poll = loop.time()
        try:
            while True:
                if self._fatal is not None:
                    raise self._fatal
                if loop.time() >= next_poll or self._poll_soon:
                    self._poll_soon = False
                    try:
                        await self._poll()
                    except (AuthError, CapabilityMissing):
                        raise
                    except ItoError as exc:
                        failures += 1
                        delay = floored_jitter(failures, self.poll_s, self.poll_s, MAX_BACKOFF_S)
                        log_at = logging.WARNING if failures == 1 else logging.DEBUG
                        log.log(log_at, "runs not listed (%s); again in %.0f s", exc, delay)
                        next_poll = loop.time() + delay
                    else:
                        if failures:
                            log.info("runs listed again after %d failures", failures)
                        failures = 0
                        next_poll = loop.time() + self.poll_s
                now = loop.time()
                self._check_silence(now)
                self._wake.clear()
                clocks = [f.clock for f in self._followers.values()] + self._loans.clocks()
                self._sleep_until = min(next_poll, next_due(clocks, now))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, self._sleep_until - now))
        finally:
            await self._stop_followers()

    async def _whoami(self) -> None:
        if self.operator is not None:
            return
        try:
            self.operator = (await self.client.whoami()).operator
        except AuthError:
            raise
        except ItoError as exc:
            # Unknown: every decision then reads as someone else's.
            log.info("operator unknown (%s): decisions count as someone else's", exc)

    async def _poll(self) -> None:
        summaries = await self.client.runs()
        self.polls += 1
        active = [
            s
            for s in summaries
            if str(s.state) not in _TERMINAL and (not self.only or s.run_id in self.only)
        ]
        ids = {s.run_id for s in active}
        self._failing &= ids  # bounded: only runs still active can fail again
        watched = self._followers.keys() | {r for r in self._pending if r in self._loans}
        for run_id in [r for r in self._pending if r not in ids and r not in watched]:
            await self._settle(run_id)  # ended (or left the list) while not followed
        for summary in sorted(active, key=_priority):
            if len(self._followers) >= self.max_followed:
                break
            if summary.run_id not in self._followers and summary.run_id not in self._loans:
                follower = _Follower(summary.run_id)
                self._followers[summary.run_id] = follower
                follower.task = asyncio.get_running_loop().create_task(
                    self._follow(follower), name=f"watch-{summary.run_id[:40]}"
                )

    async def _stop_followers(self) -> None:
        tasks = [f.task for f in self._followers.values() if f.task is not None]
        tasks += self._lent_tasks
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ------------------------------------------------------------ one run

    async def _follow(self, follower: _Follower) -> None:
        run_id = follower.run_id
        stream: EventFeed | None = None
        try:
            run = await self.client.run(run_id)
            if run.terminal:
                await self._settle(run_id)
                return
            tracker = follower.tracker = RunTracker(run, log_capacity=16)
            follower.clock = SilenceClock(self.stall_after_s, asyncio.get_running_loop().time())
            await self._reconcile(run_id, run, tracker.state.current_stage)
            stream = follower.stream = self.client.events(run_id, since_seq=run.last_event_seq)
            async for event in stream:
                snapshot = getattr(event, "data", None) if event.type == "resync" else None
                self._on_event(follower, tracker, event)
                if isinstance(snapshot, Run):
                    await self._reconcile(run_id, snapshot, tracker.state.current_stage)
                if event.terminal:
                    break
            self._failing.discard(run_id)
            await self._settle(run_id)
        except AuthError as exc:
            self._fatal = exc
            self._wake.set()
        except ItoError as exc:
            # Dropped; the next poll follows it again if it is still active.
            log_at = logging.DEBUG if run_id in self._failing else logging.WARNING
            log.log(log_at, "stopped following %s: %s", one_line(run_id, max_len=80), exc)
            self._failing.add(run_id)
        finally:
            if stream is not None:
                await stream.aclose()
            self._followers.pop(run_id, None)

    def _on_event(self, follower: _Follower, tracker: RunTracker, event: EventBase) -> None:
        if event.type == "resync" and event.seq <= tracker.last_seq:
            # The backend's history went backwards (or the run's end was re-read): re-base.
            tracker.rebase(getattr(event, "data"))  # noqa: B009 - dynamic event class
            return
        if not tracker.feed(event):
            return  # history or a duplicate: it alerted (or not) when it was new
        state = tracker.state
        clock = follower.clock
        now = asyncio.get_running_loop().time()
        if clock is not None:
            was_silent = clock.silent
            if clock.observe(event, now, state=state.state, stage=state.current_stage):
                self._emit(self._silent_alert(state))
            self._clock_moved(clock, was_silent)
        alert = alert_for(event, state)
        if alert is not None:
            self._emit(alert)
        self._proposal_event(event, state)

    def _proposal_event(self, event: EventBase, state: RunState) -> None:
        proposal = getattr(getattr(event, "data", None), "proposal", None)
        if event.type.startswith("proposal.") and isinstance(proposal, Proposal):
            # The reducer's copy: its status follows the event type, whatever the body says.
            current = state.proposals.get(proposal.proposal_id, proposal)
            self._proposal_changed(current, state.current_stage)

    def _proposal_changed(self, proposal: Proposal, stage: str | None) -> None:
        pending = self._pending.setdefault(proposal.run_id, {})
        pid = proposal.proposal_id
        if str(proposal.status) == "pending":
            if pid not in pending:
                pending[pid] = pending_from(proposal, stage)
                self._publish()
            return
        if pending.pop(pid, None) is None:
            return
        self._left_pending(proposal)
        self._publish()

    async def _reconcile(self, run_id: str, run: Run, stage: str | None) -> None:
        """Take a snapshot's pending set: new ones are read, vanished ones judged."""
        known = self._pending.get(run_id, {})
        wanted = set(run.pending_proposal_ids)
        if wanted == set(known):
            self._pending[run_id] = known
            return
        proposals = await self.client.proposals(run_id)
        by_id = {p.proposal_id: p for p in proposals}
        fresh = {
            pid: known.get(pid) or pending_from(by_id[pid], stage)
            for pid in wanted
            if pid in by_id and str(by_id[pid].status) == "pending"
        }
        for pid in set(known) - set(fresh):
            if pid in by_id:
                self._left_pending(by_id[pid])
        self._pending[run_id] = fresh
        self._publish()

    async def _settle(self, run_id: str) -> None:
        """The run ended or is no longer followed: judge what was pending, then forget it."""
        known = self._pending.get(run_id)
        if known:
            try:
                proposals = await self.client.proposals(run_id)
            except AuthError:
                raise
            except ItoError as exc:
                log.info("proposals of %s not re-read (%s)", one_line(run_id, max_len=80), exc)
                return  # kept: judged at a later poll
            for p in proposals:
                if p.proposal_id in known and str(p.status) != "pending":
                    self._left_pending(p)
        if self._pending.pop(run_id, None) is not None:
            self._publish()

    def _left_pending(self, proposal: Proposal) -> None:
        pid = proposal.proposal_id
        missed = missed_from(
            proposal, operator=self.operator, seen=pid in self._seen, now=datetime.now(UTC)
        )
        if missed is None or pid in self._missed_ids:
            return
        self._missed_ids[pid] = None
        while len(self._missed_ids) > 2 * MAX_MISSED:
            self._missed_ids.popitem(last=False)
        self._missed.appendleft(missed)
        self._emit(missed_alert(missed, str(proposal.status)))

    # ------------------------------------------------------------ silence, output

    def _check_silence(self, now: float) -> None:
        self.checks += 1
        for follower in list(self._followers.values()):
            clock, tracker, stream = follower.clock, follower.tracker, follower.stream
            if clock is None or tracker is None or stream is None:
                continue
            state = tracker.state
            live = stream.state.status in ("live", "resynced")
            if clock.check(now, state=state.state, stage=state.current_stage, live=live):
                self._emit(self._silent_alert(state))
        for state in self._loans.silent(now):
            self._emit(self._silent_alert(state))
        if self.silent_runs() != self._needs.silent:
            self._publish()  # a spell began or ended: the runs list marks the run

    def _silent_alert(self, state: RunState) -> Alert:
        return silent_alert(state, self.stall_after_s)

    def _publish(self) -> None:
        pending = [p for run in self._pending.values() for p in run.values()]
        self._needs = NeedsYou.of(pending, tuple(self._missed), self.silent_runs())
        self._call(self.on_change, self._needs)

    def _emit(self, alert: Alert) -> None:
        self._call(self.on_alert, alert)

    @staticmethod
    def _call(callback: Callable[[Any], None], value: Any) -> None:
        try:
            callback(value)
        except Exception:
            # A consumer's bug must not stop alerts for every other run.
            log.exception("an alert consumer failed")


def _priority(summary: RunSummary) -> tuple[bool, bool, float]:
    """Runs waiting for a decision first, then the most recently updated."""
    return (
        not summary.pending_proposal_ids,
        str(summary.state) != "awaiting_approval",
        -summary.updated_at.timestamp(),
    )
