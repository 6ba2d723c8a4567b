"""`RunTracker`: one run's `RunState`, `TelemetryBank` and `EventLog`, fed event by event.

The one owner of a run's data: the stream's events (`feed`), snapshots (`seed`,
`rebase`) and telemetry pages (`backfill`) all go through it, and each returns the
`Changes` it made, so the screen repaints what changed and nothing copies state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from ito_tui.contract import EventBase, Run, TelemetrySample
from ito_tui.format import to_float

from .bank import TelemetryBank
from .changes import EVERYTHING, NOTHING, Changes, changes
from .eventlog import EventLog
from .inspect_marks import MarkLog, event_marks
from .markers import event_markers
from .projection import Projection, projection
from .run import RunState
from .telemetry import MAX_MARKERS
from .views import chart_view, progress, stage_views

if TYPE_CHECKING:
    from .inspect_points import Mark, Reference, XAxis
    from .views import ChartView, Progress, StageView

__all__ = ["RunTracker", "rebased"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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
        self._bank = TelemetryBank()
        self.log = EventLog(log_capacity)
        self._logged = 0
        """The highest seq offered to the log."""
        self._last_x: float | None = None
        """The x (`ts`, seconds) of the newest sample in the bank: markers go there."""
        self._sample_seq = 0
        """The seq of the newest sample in the bank: one at or below it is there already."""
        self._markers: deque[tuple[float, str]] = deque(maxlen=MAX_MARKERS)
        """Every chart marker (x, label), kept to re-mark a bank a backfill rebuilds."""
        self._marks = MarkLog()
        """The inspector's marks (`marks()`), the newest `MAX_MARKS`."""
        self._last_step: int | None = None
        self._last_tokens: int | None = None
        self.clock: datetime | None = None
        """The run's clock: the newest `sim_ts` (else `ts`) of an accepted event."""

    @property
    def bank(self) -> TelemetryBank:
        """The charts' history (read-only: `backfill(fresh=True)` is how it is replaced,
        which keeps the markers and the sample numbering in step with it)."""
        return self._bank

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def last_seq(self) -> int:
        return self.state.last_seq

    @property
    def rewinds(self) -> int:
        """How many step rewinds the run has had (the charts' caption counts them)."""
        return len(self.state.rewinds)

    # ------------------------------------------------------------ writing

    def feed(self, event: EventBase) -> Changes:
        """Apply `event` and say what changed; `NOTHING` when its seq was already seen.

        An event the state already holds because it was seeded from a later snapshot is
        history: it goes to the log (once, in seq order) and nowhere else. A screen that
        opens a run mid-way replays the stream from before its snapshot to fill the log.
        A `resync` at or below the last seq is a snapshot behind what was shown (the
        backend's history went backwards, or the run's end re-read): the state re-bases on
        it, numbering included.
        """
        before = self.state
        if event.seq <= before.last_seq:
            if event.type == "resync":
                return self.rebase(getattr(event, "data"))  # noqa: B009 - dynamic event class
            if event.seq > self._logged:
                self._logged = event.seq
                # History: marked from the event alone, at its own time and step.
                self._marks.add(event_marks(None, None, event, ts=None, step=None, tokens=None))
                return changes(log=self.log.append(event) is not None)
            return NOTHING
        after = before.apply(event)
        self.state = after
        moment = event.at
        if self.clock is None or moment > self.clock:
            self.clock = moment
        self._logged = event.seq
        logged = self.log.append(event) is not None
        if event.type == "resync":
            return EVERYTHING
        telemetry = False
        sample = getattr(event, "data", None)
        # Keyed by the sample's own `ts` (`_ingest`), like a `GET /telemetry` backfill, so
        # live and backfilled samples share one x axis (event `sim_ts` has no page twin).
        # A page fetched after the snapshot may already hold the samples the stream then
        # sends: by their seq, they are not drawn twice (nor marked "x went back").
        if isinstance(sample, TelemetrySample):
            # The pace is measured on the run's clock (the event's sim_ts), live only.
            # float() of the (finite) Decimal: an absurd amount is inf, which the
            # projection treats as unknown; format.to_float's range check costs 10 µs.
            self.bank.pace.add(
                str(sample.stage), moment.timestamp(), sample.step, float(sample.spend_usd)
            )
            if sample.seq > self._sample_seq:
                self._ingest(sample)
                telemetry = True
        self._marks.add(
            event_marks(
                before,
                after,
                event,
                ts=self._last_x,
                step=self._last_step,
                tokens=self._last_tokens,
            )
        )
        labels = event_markers(before, after, event)
        at = self._last_x if labels else None
        if at is not None:
            for label in labels:
                self._mark(at, label)
            telemetry = True
        if after.terminal and self._spend_to_the_end():
            telemetry = True
        return changes(
            run=after is not before,
            log=logged,
            telemetry=telemetry,
            # By identity: a reducer shares every field it did not change.
            timeline=after.checkpoints is not before.checkpoints
            or after.checkpoint_failures is not before.checkpoint_failures
            or after.faults is not before.faults
            or after.slo_breaches is not before.slo_breaches
            or after.node_events is not before.node_events,
            proposals=after.proposals is not before.proposals
            or after.pending_proposals is not before.pending_proposals,
        )

    def rebase(self, run: Run) -> Changes:
        """Take `run` as the truth, numbering included, though it is behind (`rebased`).

        The log keeps what was shown; events are logged again from the new numbering.
        """
        self.state = rebased(self.state, run)
        self._logged = self.state.last_seq
        # Samples are numbered from there too (a fresh backfill then replaces the bank).
        self._sample_seq = min(self._sample_seq, self.state.last_seq)
        return EVERYTHING

    def seed(self, run: Run) -> Changes:
        """Re-seed from a snapshot fetched out of band (keeps charts, log and markers).

        A snapshot older than what the events already said is ignored (`NOTHING`).
        """
        if run.last_event_seq < self.state.last_seq:
            return NOTHING
        self.state = self.state.reseed(run, seq=run.last_event_seq)
        self._spend_to_the_end()  # a snapshot of the run's end, its charts held already
        return EVERYTHING

    def backfill(self, samples: Iterable[TelemetrySample], *, fresh: bool = True) -> Changes:
        """Add a `GET /telemetry` page, oldest first, skipping what the bank already has.

        `fresh` starts a new bank (on open, and after a resync, whose history may have
        gaps or overlaps with what the old bank holds); the chart markers are kept.
        """
        if fresh:
            pace = self._bank.pace
            self._bank = TelemetryBank()
            self._bank.pace = pace  # measured from live events: a backfill has no sim_ts
            self._last_x, self._sample_seq = None, 0
        count = self.bank.samples
        for sample in sorted(samples, key=lambda s: s.seq):
            if sample.seq > self._sample_seq:
                self._ingest(sample)
        added = self.bank.samples - count
        if fresh:
            for x, label in self._markers:
                self.bank.add_marker(x, label)
        ended = self._spend_to_the_end()
        return changes(telemetry=fresh or added > 0 or ended)

    def _ingest(self, sample: TelemetrySample) -> None:
        x = sample.ts.timestamp()
        self.bank.ingest(sample, x)
        self._sample_seq = sample.seq
        self._last_x = x if self._last_x is None else max(x, self._last_x)
        self._last_step, self._last_tokens = sample.step, sample.tokens_seen

    def _spend_to_the_end(self) -> bool:
        """An ended run's spend chart ends at what the run spent, as its header says: the
        trainer's last sample comes before the final checkpoint and gate evaluation, which
        the run's spend includes (a completed demo run: chart $13,638.29, header
        $13,678.13). The run's figure is drawn at the last sample's x. True if it was added
        (once: a repeat finds it there)."""
        state = self.state
        spent = state.usd_spent if state.terminal else None
        series = self.bank.series["spend_usd"]
        if spent is None or series.last_x is None or not spent.is_finite():
            return False
        final = to_float(spent)  # a Decimal past float range: the largest float, not inf
        if final == series.last:
            return False
        series.append(series.last_x, final)
        return True

    def _mark(self, x: float, label: str) -> None:
        self._markers.append((x, label))
        self.bank.add_marker(x, label)

    # ------------------------------------------------------------ views

    def chart(
        self,
        key: str,
        width: int,
        window_s: float | None,
        reference: Reference | None = None,
        by: XAxis = "tokens",
    ) -> ChartView:
        """The `key` chart (`views.chart_view`) of this run, `reference` drawn on it."""
        return chart_view(self.state, self.bank, key, width, window_s, reference, by)

    def marks(self) -> tuple[Mark, ...]:
        """The inspector's marks of this run, oldest first: faults, recoveries,
        checkpoints, rewinds, gate verdicts and proposals (the newest `MAX_MARKS`)."""
        return self._marks.marks()

    def stages(self) -> tuple[StageView, ...]:
        return stage_views(self.state)

    def progress(self) -> Progress:
        return progress(self.state)

    def projection(
        self,
        *,
        booking_ends_at: datetime | None = None,
        budget_usd: Decimal | None = None,
        now: datetime | None = None,
    ) -> Projection:
        """The run's projected finish and spend (`state.projection`). `budget_usd` defaults
        to the run's own budget, `now` to the run's clock (`clock`)."""
        if budget_usd is None:
            budget_usd = progress(self.state).budget_usd
        if now is None:
            now = self.clock or _EPOCH  # nothing heard yet: nothing measured either
        return projection(
            self.state, self.bank, booking_ends_at=booking_ends_at, budget_usd=budget_usd, now=now
        )
