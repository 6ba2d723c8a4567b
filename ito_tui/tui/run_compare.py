"""The run screen's reference run: another run drawn on the same charts, and fetched for it.

`c` on the run screen (or `c` on the runs list with two runs marked) chooses the
reference; `RunCompare` fetches it in a worker through the app's client: the run
(`GET /v1/runs/{id}`, for its state and its spec) and one telemetry page of it
(`GET /telemetry` with `max_points` and the open metrics charted), made a
`state.Reference` of every charted key. While the reference run is active it is fetched
again every `REFRESH_S`, the next fetch armed only once the last one finished (requests
never overlap); a finished run is fetched once. A failed fetch says so in the charts'
legend and keeps the reference drawn so far. The charts read `reference` when they are
computed (`PipelineScreen._paint_charts`, aligned by `by`); the inspector reads it from
the screen (`PipelineScreen.reference`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ito_tui.client.errors import ItoError
from ito_tui.state.inspect_points import Reference, XAxis
from ito_tui.state.inspect_ref import BY_WORDS
from ito_tui.state.metrics import METRICS
from ito_tui.textsafe import one_line
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.chart_text import OURS_GLYPH, REF_GLYPH

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.screen import Screen
    from textual.timer import Timer

    from ito_tui.contract import Run

__all__ = ["REFRESH_S", "REF_POINTS", "RunCompare"]

REFRESH_S = 30.0
"""How often an active reference run is fetched again."""
REF_POINTS = 2_000
"""`max_points` of a reference's telemetry page (the `Reference` keeps at most this a key)."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})
FIXED_KEYS = tuple(m.key for m in METRICS if m.chart)
"""Every fixed chart's key (the RL ones too: a stage change needs no new fetch)."""


class RunCompare:
    """The reference of one run screen: which run, its points, how its last fetch went."""

    def __init__(
        self,
        screen: Screen[Any],
        extras: Callable[[], tuple[str, ...]],
        changed: Callable[[], None],
    ) -> None:
        """`extras`: the open metrics charted now (fetched too); `changed`: the charts
        should be computed again (a new reference, or none)."""
        self.screen = screen
        self._extras = extras
        self._changed = changed
        self.run_id: str | None = None
        """The reference run chosen (None: none); its points may not have come yet."""
        self.reference: Reference | None = None
        self.run: Run | None = None
        """The reference run's snapshot from the last fetch that got it."""
        self.by: XAxis = "tokens"
        self.fetches = 0
        """Fetches finished (either way), for tests and the bench."""
        self.error: str | None = None
        """Why the last fetch failed (None: it did not)."""
        self._timer: Timer | None = None
        self._asked: frozenset[str] = frozenset()
        """The open metrics the reference was last fetched with."""

    @property
    def fetching(self) -> bool:
        return self.run_id is not None and self.reference is None and self.error is None

    def choose(self, run_id: str | None) -> None:
        """Draw run `run_id` beside this one from now on (None: this run alone)."""
        if run_id == self.run_id:
            return
        self._stop()
        self.run_id, self.reference, self.run, self.error = run_id, None, None, None
        self._changed()
        if run_id is not None:
            self._start()

    def wants(self, extras: tuple[str, ...]) -> None:
        """The open metrics charted now: fetch the reference again if one is new to it
        (a finished reference is not fetched again otherwise)."""
        if self.run_id is not None and self.fetches and not set(extras) <= self._asked:
            self._start()

    def legend(self) -> str | None:
        """The Telemetry caption's words for the reference (None: there is none)."""
        run_id = self.run_id
        if run_id is None:
            return None
        name = one_line(run_id, 32)
        # The reference first: at 80 columns the caption is ~40 cells and cuts its end.
        text = f"{REF_GLYPH} {name} ({BY_WORDS[self.by]}) · {OURS_GLYPH} this run"
        if self.error is not None:
            kept = "the last kept" if self.reference is not None else "nothing to draw"
            return f"{REF_GLYPH} {name}: fetch failed, {kept}"
        if self.reference is None:
            return f"{REF_GLYPH} {name}: fetching…"
        return text

    def _start(self) -> None:
        run_id = self.run_id
        if run_id is not None:
            self.screen.run_worker(
                self._fetch(run_id),
                group="pipeline-reference",
                exclusive=True,
                exit_on_error=False,
            )

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    async def _fetch(self, run_id: str) -> None:
        client = shell(self.screen).client
        extras = tuple(self._extras())
        self._asked = frozenset(extras)
        keys = (*FIXED_KEYS, *extras)
        try:
            run = await client.run(run_id)
            page = await client.telemetry(run_id, max_points=REF_POINTS, metrics=extras)
        except ItoError as exc:
            if run_id != self.run_id:
                return  # another reference was chosen meanwhile
            if self.error is None:  # once a streak: the legend says it until one succeeds
                self.screen.notify(
                    f"Could not fetch {run_id}: {one_line(str(exc), 120)}",
                    title="Reference run",
                    severity="warning",
                    markup=False,
                )
            self.error = one_line(str(exc), 120)
            self.fetches += 1
            self._changed()
            self._again(run_id)  # it may answer next time; what was drawn stays
            return
        if run_id != self.run_id:
            return
        self.run, self.error = run, None
        self.reference = Reference.of(run_id, run_id, page.items, keys)
        self.fetches += 1
        self._changed()
        if str(run.state) not in TERMINAL:
            self._again(run_id)

    def _again(self, run_id: str) -> None:
        """Arm the next fetch, now that this one finished: requests never overlap."""
        self._stop()

        def fetch() -> None:
            if self.run_id == run_id:
                self._start()

        self._timer = self.screen.set_timer(REFRESH_S, fetch)
