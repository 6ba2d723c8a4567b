"""The run screen's summary once the run has ended (`state.summary.run_end`), in its
panel (`tui/widgets/run_summary.py`).

Besides what the stream and the snapshot said, a finished run's summary wants its
proposals (the rollbacks among them) and its newest telemetry sample (the final loss of
the stage it ended in): read once, when the run is first seen ended, as `ito-tui status`
reads them, so the two say the same. Without them (a capability missing, a failed
read), those facts are shown as missing (`—`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ito_tui.client.errors import ItoError
from ito_tui.state.summary import run_end
from ito_tui.tui.session import shell

if TYPE_CHECKING:
    from ito_tui.contract import Proposal, TelemetrySample
    from ito_tui.tui.screens.pipeline import PipelineScreen

__all__ = ["LAST_SAMPLE_POINTS", "RunEnding"]

LAST_SAMPLE_POINTS = 2
"""`max_points` of the one telemetry page asked for: the range's newest sample is kept."""


class RunEnding:
    """Keeps the screen's summary panel in step with the run (see the module docstring)."""

    def __init__(self, screen: PipelineScreen) -> None:
        self.screen = screen
        self.proposals: list[Proposal] | None = None
        self.sample: TelemetrySample | None = None
        self._asked = False

    def paint(self) -> None:
        screen = self.screen
        state = screen.run_state
        panel = screen._summary
        if not state.terminal:
            if panel.end is not None:
                panel.end = None
            return
        if not self._asked:
            self._asked = True
            screen.run_worker(self._read(), group="run-summary", exit_on_error=False)
        end = run_end(state, proposals=self.proposals, last_sample=self.sample)
        if end != panel.end:
            panel.end = end

    async def _read(self) -> None:
        screen = self.screen
        client, caps = shell(screen).client, shell(screen).session.capabilities
        run_id = screen.run_id
        try:
            if caps is not None and caps.has("proposals.read"):
                self.proposals = await client.proposals(run_id)
            if caps is not None and caps.has("runs.telemetry"):
                page = await client.telemetry(run_id, max_points=LAST_SAMPLE_POINTS)
                self.sample = max(page.items, key=lambda s: s.seq, default=None)
        except ItoError:
            pass  # those facts stay missing (—); the rest of the summary stands
        self.paint()
