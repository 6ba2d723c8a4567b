"""`status`'s run summary once a run has ended: the facts it needs beyond the snapshot,
fetched, and the summary printed (`state/summary_text.py`'s rows, the run screen's too).

Beyond the `Run`, a finished run's summary needs its proposals (its rollbacks) and its
newest telemetry sample (the final loss of the stage it ended in): each is fetched only
when the backend offers it; without it that fact is shown as missing (`—`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .output import Output, safe

if TYPE_CHECKING:
    from ito_tui.client.protocol import ItoApi
    from ito_tui.contract import Run
    from ito_tui.state.summary import RunEnd

LAST_SAMPLE_POINTS = 2
"""`max_points` of the one telemetry page asked for: the range's newest sample is kept."""


async def fetch_run_end(client: ItoApi, run: Run, out: Output) -> RunEnd | None:
    """The summary of `run` (None while it runs), with its proposals and newest sample
    when the backend offers them (a failed read of either: a warning on `out`'s stderr)."""
    if not run.terminal:
        return None
    from ito_tui.client.errors import AuthError, BackendUnavailable, ItoError
    from ito_tui.state import RunState
    from ito_tui.state.summary import run_end

    caps = await client.capabilities()
    proposals, sample = None, None
    try:
        if caps.has("proposals.read"):
            proposals = await client.proposals(run.run_id)
        if caps.has("runs.telemetry"):
            page = await client.telemetry(run.run_id, max_points=LAST_SAMPLE_POINTS)
            sample = max(page.items, key=lambda s: s.seq, default=None)
    except (AuthError, BackendUnavailable):
        raise  # the session's problem: the command says so and exits with its code
    except ItoError as exc:
        # A refused or malformed extra read costs the summary those facts (—), not the
        # snapshot: say which, and print the rest.
        out.warn(f"summary: {safe(exc)}; its rollbacks or final loss are shown as —")
    return run_end(RunState.from_run(run), proposals=proposals, last_sample=sample)


def render_summary(out: Output, end: RunEnd) -> None:
    """The summary as `label  text` lines under a `summary` heading."""
    from ito_tui.state.summary_text import summary_rows

    out.line(out.style("summary", "bold"))
    out.pairs(summary_rows(end))
