"""The run screen and the app's alerting: the run lent to the screen, given back, and the
watcher's news about it.

While a run screen follows its run, the app's `RunsWatcher` takes that run's events from
the screen instead of following a second stream (`AppAlerts.lend`); the screen gives it
back when it closes or its stream fails (`_give_back`). `RunLending` is that part of the
run screen (`PipelineScreen`'s base, beside `RunActions`), moved out of `pipeline.py`
to keep it under 400 lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ito_tui.textsafe import safe
from ito_tui.tui.errors import forward_failure
from ito_tui.tui.messages import NeedsYouChanged

if TYPE_CHECKING:
    from ito_tui.tui.alerts import Alerter
    from ito_tui.tui.needs_you import AppAlerts
    from ito_tui.tui.repaint import Repaints
    from ito_tui.tui.run_proposals import RunProposals
    from ito_tui.tui.widgets.silence_banner import SilenceBanner

__all__ = ["RunLending"]


class RunLending(Screen[None]):
    """The run screen's side of lending its run to the app's watcher."""

    # What the screen provides (set in its `__init__`).
    run_id: str
    repaints: Repaints
    proposals: RunProposals
    connection: str
    _lent: bool
    """Whether the app's watcher takes this run's events from this screen."""
    _shown_unseen: frozenset[str]
    _silence: SilenceBanner

    def _give_back(self) -> None:
        alerting = self._alerting()
        if self._lent and alerting is not None:
            alerting.give_back(self.run_id)
        self._lent = False

    def _alerting(self) -> AppAlerts | None:
        return getattr(self.app, "alerting", None)

    @property
    def alerter(self) -> Alerter | None:
        """The app's alert router (every run's alerts go through it, once each)."""
        return getattr(self.app, "alerter", None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Say in the header that following stopped; the app's error sink tells why."""
        if event.worker.group != "pipeline-stream" or event.state != WorkerState.ERROR:
            return
        self.connection = f"offline: {safe(str(event.worker.error))}"
        self.repaints.mark("strip")
        self._give_back()  # not followed here any more: the app's watcher follows it
        forward_failure(self, event)

    def on_needs_you_changed(self, event: NeedsYouChanged) -> None:
        """The app's watcher's news: a proposal of this run missed (the log says so), a
        silent spell begun or ended (the banner reads the watcher's clock)."""
        self._silence.check()
        unseen = self.proposals.unseen()
        if unseen != self._shown_unseen:
            self._shown_unseen = unseen
            self.repaints.mark("log")
