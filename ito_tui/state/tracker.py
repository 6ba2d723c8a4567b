"""`RunTracker`: one run's `RunState`, `TelemetryBank` and `EventLog`, fed event by event."""

from __future__ import annotations

from dataclasses import replace

from ito_tui.contract import EventBase, Run, TelemetrySample

from .bank import TelemetryBank
from .eventlog import EventLog
from .run import RunState

__all__ = ["RunTracker", "rebased"]


def rebased(state: RunState, run: Run) -> RunState:
    """`state` re-seeded from `run` *and its numbering*, even though `run` is behind it.

    For a backend whose history went backwards (restored from a backup): the
    stream yields its snapshot as a `resync` at or below a seq already applied,
    and the events after it, numbered from there, must apply rather than look
    like replays. Markers, proposals and everything a Run does not carry stay.
    """
    behind = replace(state, last_seq=0, spend_seq=0, telemetry_seq=0)
    return replace(behind.reseed(run, seq=run.last_event_seq), resynced=state.resynced + 1)


class RunTracker:
    """Everything the screens and `watch` show about one run, as a pure function of events.

    `state` is replaced (never mutated) on each accepted event, so a reader that
    kept the previous `RunState` can compare the two to see what changed.
    """

    def __init__(self, run: str | Run, *, log_capacity: int = 2000) -> None:
        self.state = RunState.from_run(run) if isinstance(run, Run) else RunState.empty(run)
        self.bank = TelemetryBank()
        self.log = EventLog(log_capacity)
        self._logged = 0
        """The highest seq offered to the log."""

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def last_seq(self) -> int:
        return self.state.last_seq

    def feed(self, event: EventBase) -> bool:
        """Apply `event`; False (and the state does not change) when its seq was already
        seen.

        An event the state already holds because it was seeded from a later snapshot is
        history: it goes to the log (once, in seq order) and nowhere else. A screen that
        opens a run mid-way replays the stream from before its snapshot to fill the log.
        """
        before = self.state
        if event.seq <= before.last_seq:
            if event.seq > self._logged:
                self._logged = event.seq
                self.log.append(event)
            return False
        after = before.apply(event)
        self.state = after
        self._logged = event.seq
        self.log.append(event)
        sample = getattr(event, "data", None)
        if isinstance(sample, TelemetrySample):
            # Keyed by the sample's own `ts`, like a `GET /telemetry` backfill, so live
            # and backfilled samples share one x axis (event `sim_ts` has no page twin).
            self.bank.ingest(sample)
        if len(after.rewinds) != len(before.rewinds) or (
            after.rewinds and after.rewinds[-1] is not before.rewinds[-1]
        ):
            rw = after.rewinds[-1]
            at = self.bank["loss"].last_x
            if at is not None:
                self.bank.add_marker(at, f"rewind {rw.from_step}→{rw.to_step}")
        return True

    def rebase(self, run: Run) -> None:
        """Take `run` as the truth, numbering included, though it is behind (`rebased`).

        The log keeps what was shown; events are logged again from the new numbering.
        """
        self.state = rebased(self.state, run)
        self._logged = self.state.last_seq

    def seed(self, run: Run) -> bool:
        """Re-seed from a snapshot fetched out of band (keeps charts, log and markers).

        A snapshot older than what the events already said is ignored (False).
        """
        if run.last_event_seq < self.state.last_seq:
            return False
        self.state = self.state.reseed(run, seq=run.last_event_seq)
        return True
