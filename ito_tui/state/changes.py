"""`Changes`: what one step of the run's data flow changed, so each panel repaints once.

`RunTracker.feed`, `seed`, `rebase` and `backfill` return one; the run screen's repaint
scheduler reads its flags.

Truthy when the run's data changed (the state, the bank, the timeline, the proposals):
`if tracker.feed(event):` still asks "did this event apply?", as it did when `feed`
returned a bool. A line of history (an event from before the seeding snapshot, which
only the log takes) is `Changes(log=True)`: falsy, though the log must repaint.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

__all__ = ["EVERYTHING", "NOTHING", "Changes", "changes"]


@dataclass(frozen=True, slots=True)
class Changes:
    """Which parts of a run's view an operation changed (all False: nothing)."""

    run: bool = False
    """`RunState` was replaced: progress, stages, spend, gates, plan, outcome."""
    log: bool = False
    """The event log gained (or re-marked) a line."""
    telemetry: bool = False
    """The bank gained samples or markers, or was rebuilt (the charts)."""
    timeline: bool = False
    """Checkpoints, faults or node incidents (`RunState.node_events`) changed."""
    proposals: bool = False
    """A proposal was created, decided or expired."""

    def __bool__(self) -> bool:
        # `log` alone is history: it applied nothing (see the module docstring).
        return self.run or self.telemetry or self.timeline or self.proposals

    @property
    def any(self) -> bool:
        """Whether anything at all changed, the log included (something to repaint)."""
        return bool(self) or self.log

    def __or__(self, other: Changes) -> Changes:
        return changes(
            run=self.run or other.run,
            log=self.log or other.log,
            telemetry=self.telemetry or other.telemetry,
            timeline=self.timeline or other.timeline,
            proposals=self.proposals or other.proposals,
        )


_ALL: dict[tuple[bool, ...], Changes] = {
    flags: Changes(*flags) for flags in product((False, True), repeat=5)
}
"""Every `Changes` there can be, built once: `feed` runs ~50,000 times a second, and a
frozen dataclass costs a microsecond to build."""


def changes(
    *,
    run: bool = False,
    log: bool = False,
    telemetry: bool = False,
    timeline: bool = False,
    proposals: bool = False,
) -> Changes:
    """The (shared, immutable) `Changes` with these flags."""
    return _ALL[run, log, telemetry, timeline, proposals]


NOTHING = changes()
"""Nothing changed (a duplicate event, a snapshot older than the state)."""
EVERYTHING = changes(run=True, log=True, telemetry=True, timeline=True, proposals=True)
"""Everything may have changed (a seed, a rebase, a resync): repaint every panel."""
