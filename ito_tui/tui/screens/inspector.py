"""InspectorScreen: one chart full-screen, with a cursor, zoom, pan, axes, log-Y, smoothing.

Opened from the run screen (Enter or a click on a chart). It draws at once from what it
has (nothing but the marks, the first time), and fetches the whole run downsampled to
`2 × width` points through the app's client in a worker; a zoom or a pan fetches the
steps it shows (`wanted_steps`) at the same resolution, again in a worker, while the
coarser data stays drawn and the title says "fetching…" (a failure keeps it and says
why). It holds the whole-run page, one zoomed page and a bounded live tail, never more:
the view is computed from them by `state.inspect.inspector_view` (pure) and drawn by
`InspectorPlot`. Samples of a running run come from the run screen (`observe`) and
extend the view while it shows the end.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from ito_tui.contract import TelemetrySample
from ito_tui.state.inspect import (
    InspectorView,
    Mark,
    Point,
    Viewport,
    cycle_axis,
    cycle_smoothing,
    inspector_view,
    move_cursor,
    pan,
    reset,
    toggle_log,
    wanted_steps,
    with_cursor,
    zoom,
)
from ito_tui.state.inspect_points import x_of
from ito_tui.state.metrics import BY_KEY
from ito_tui.textsafe import one_line
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.inspector_pages import InspectorPages, write_csv
from ito_tui.tui.messages import OpenLogsAt
from ito_tui.tui.screens.inspector_keys import KEYS
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.plot import InspectorPlot
from ito_tui.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from pathlib import Path

    from ito_tui.contract import EventBase
    from ito_tui.state import RunTracker
    from ito_tui.state.inspect import Reference
    from ito_tui.tui.widgets.eventlog import LogEntry

__all__ = ["InspectorScreen"]

ZOOM = 2.0
PAN = 0.25
"""A pan moves the range by this fraction of its width."""
REDRAW_S = 0.1
"""Live samples redraw the view at most this often."""
_LOGS_KINDS = frozenset({"fault", "gate"})
"""Marks whose Enter opens the job log at their time (the others: their event)."""


class InspectorScreen(StyledOnFirstShow, Screen[None]):
    """One metric of one run, full-screen; Escape goes back to the run screen."""

    CSS_PATH = "inspector.tcss"

    BINDINGS = KEYS

    def __init__(
        self,
        run_id: str,
        key: str,
        *,
        tracker: RunTracker | None = None,
        reference: Reference | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.run_id = run_id
        self.key = key
        self.tracker = tracker
        self.reference = reference
        metric = BY_KEY.get(key)
        self.label = metric.label if metric is not None else one_line(key, 48)
        self.unit = metric.unit if metric is not None else "number"
        self.viewport = Viewport()
        self.view: InspectorView | None = None
        self.status = ""
        """What the title says of the data: "fetching…", why a fetch failed, or nothing."""
        self.fetches = 0
        """Pages received (whole run and zoomed)."""
        self.pages = InspectorPages(key)
        """What is held: the whole-run page, one zoomed page, the live tail."""
        self._wanted: tuple[int, int] | None = None
        """The step range of the zoom fetch in flight (None: none)."""
        self._whole_pending = False
        self._redraw_timer: Timer | None = None
        self.title = f"Inspect {self.label}"

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        self._title = Static(id="inspector-title", markup=False)
        self._plot = InspectorPlot(id="inspector-plot")
        yield self._title
        yield self._plot
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._redraw()

    def on_unmount(self) -> None:
        # Nothing kept once closed: the run screen drops its reference too (`inspecting`).
        self.pages.clear()

    @on(InspectorPlot.Resized)
    def _resized(self, event: InspectorPlot.Resized) -> None:
        self._redraw()
        if event.columns * 2 > self.pages.whole_width:
            self._fetch_whole()

    @on(InspectorPlot.Clicked)
    def _clicked(self, event: InspectorPlot.Clicked) -> None:
        if self.view is not None:
            self._cursor(event.column - self.view.cursor)

    # ------------------------------------------------------------ data

    def points(self) -> list[Point]:
        """Every point held (`InspectorPages.points`)."""
        return self.pages.points()

    def visible_points(self) -> list[Point]:
        """The points inside the drawn x range (what `c` writes)."""
        view = self.view
        if view is None:
            return []
        axis = view.viewport.axis
        return [p for p in self.points() if view.x_lo <= x_of(p, axis) <= view.x_hi]

    def marks(self) -> tuple[Mark, ...]:
        return self.tracker.marks() if self.tracker is not None else ()

    def observe(self, event: EventBase) -> None:
        """A live event of the run (from the run screen): a sample joins the tail and, while
        the view shows the run's end, is drawn (at most every `REDRAW_S`)."""
        sample = getattr(event, "data", None)
        if not isinstance(sample, TelemetrySample):
            return
        if self.pages.add_live(sample):
            self._fetch_whole()  # the tail is full: the whole-run page takes it in
        if not self.viewport.zoomed and self._redraw_timer is None:
            self._redraw_timer = self.set_timer(REDRAW_S, self._live_redraw)

    def _live_redraw(self) -> None:
        self._redraw_timer = None
        self._redraw()

    def _client_metrics(self) -> tuple[str, ...]:
        return () if self.key in BY_KEY else (self.key,)

    def _fetch_whole(self) -> None:
        if not self._whole_pending:
            self._whole_pending = True
            self._set_status()
            self._whole_page(max(2, 2 * self._plot.columns()))

    @work(exclusive=True, group="inspector-whole", exit_on_error=False)
    async def _whole_page(self, max_points: int) -> None:
        from ito_tui.client.errors import ItoError

        try:
            page = await shell(self).client.telemetry(
                self.run_id, max_points=max_points, metrics=self._client_metrics()
            )
        except ItoError as error:
            self._whole_pending = False
            self._failed(error)
            return
        self._whole_pending = False
        self.fetches += 1
        self.pages.set_whole(page.items, max_points)
        self._done()

    def _fetch_zoom(self) -> None:
        """Fetch the steps the view shows, unless the zoomed page held covers them finely."""
        view = self.view
        if view is None:
            return
        wanted = wanted_steps(self.viewport, view)
        if wanted is None or wanted == self._wanted:
            return
        if self.pages.covers(wanted):
            return
        self._wanted = wanted
        self._set_status()
        self._zoom_page(wanted, max(2, 2 * self._plot.columns()))

    @work(exclusive=True, group="inspector-zoom", exit_on_error=False)
    async def _zoom_page(self, steps: tuple[int, int], max_points: int) -> None:
        from ito_tui.client.errors import ItoError

        try:
            page = await shell(self).client.telemetry(
                self.run_id,
                max_points=max_points,
                metrics=self._client_metrics(),
                from_step=steps[0],
                to_step=steps[1],
            )
        except ItoError as error:
            self._wanted = None
            self._failed(error)
            return
        self._wanted = None
        self.fetches += 1
        self.pages.set_zoomed(steps, page.items)
        self._done()

    def _failed(self, error: BaseException) -> None:
        from ito_tui.tui.errors import describe_failure

        failure = describe_failure(error)
        self.status = f"fetch failed ({failure.title}: {failure.detail}); showing what was held"
        self._redraw()

    def _done(self) -> None:
        self.status = ""
        self._redraw()

    # ------------------------------------------------------------ drawing

    def _compute(self, vp: Viewport) -> InspectorView:
        ref = self.reference
        return inspector_view(
            self.points(),
            None if ref is None else ref.get(self.key),
            self.marks(),
            vp,
            self._plot.columns(),
            key=self.key,
            label=self.label,
            unit=self.unit,
            ref_label=None if ref is None else ref.label,
            y_tick_count=max(2, min(8, self._plot.plot_rows() // 3)),
        )

    def _redraw(self) -> None:
        if not self.is_mounted or not self._plot.size.width:
            return
        self.view = self._compute(self.viewport)
        self._plot.show(self.view)
        self._set_status()

    def _set_status(self) -> None:
        vp = self.viewport
        parts = [self.label, f"x: {vp.axis}", f"log-Y {'on' if vp.log_y else 'off'}"]
        parts.append(f"EMA {vp.weight:g}" if vp.weight else "raw")
        if self.reference is not None:
            parts.append(f"ref {one_line(self.reference.label, 30)}")
        pending = self._whole_pending or self._wanted is not None
        status = "fetching…" if pending else self.status
        if status:
            parts.append(status)
        self._title.update(one_line(" · ".join(parts)))

    def _set(self, vp: Viewport) -> None:
        """Draw `vp` and fetch what it needs."""
        self.viewport = vp
        self._redraw()
        self._fetch_zoom()

    # ------------------------------------------------------------ actions

    def action_cursor(self, by: int) -> None:
        self._cursor(by)

    def _cursor(self, by: int) -> None:
        """Move the cursor: only the readout and the cursor's column change (no fetch)."""
        view = self.view
        if view is None:
            return
        self.viewport = move_cursor(self.viewport, view, by)
        self.view = with_cursor(view, self.viewport)
        self._plot.show(self.view)

    def action_zoom(self, factor: float) -> None:
        if self.view is not None:
            self._set(zoom(self.viewport, self.view, factor))

    def action_pan(self, direction: int) -> None:
        if self.view is not None:
            self._set(pan(self.viewport, self.view, direction * PAN))

    def action_reset(self) -> None:
        self._set(reset(self.viewport))

    def action_axis(self) -> None:
        self._set(cycle_axis(self.viewport))

    def action_log(self) -> None:
        self._set(toggle_log(self.viewport))

    def action_smoothing(self) -> None:
        self._set(cycle_smoothing(self.viewport))

    def action_back(self) -> None:
        self.dismiss(None)

    def action_open_mark(self) -> None:
        view = self.view
        marks = view.readout.marks if view is not None and view.readout is not None else ()
        if not marks:
            self.notify("No mark under the cursor.", markup=False)
            return
        mark = next((m for m in marks if m.kind in _LOGS_KINDS), marks[-1])
        if mark.kind in _LOGS_KINDS:
            self._logs_at(datetime.fromtimestamp(mark.ts, UTC), mark.label)
            return
        entry = self._entry(mark.seq)
        if entry is None:
            self._logs_at(datetime.fromtimestamp(mark.ts, UTC), mark.label)
            return
        from ito_tui.tui.screens.event_line import EventLineScreen

        self.app.push_screen(EventLineScreen(entry))

    def _entry(self, seq: int) -> LogEntry | None:
        tracker = self.tracker
        if tracker is None:
            return None
        return next((e for e in tracker.log.entries if e.seq == seq), None)

    @on(OpenLogsAt)
    def _open_logs_at(self, message: OpenLogsAt) -> None:
        # From the event line opened over this screen (`l`): the run screen's Logs tab.
        message.stop()
        self._logs_at(message.when, message.label)

    def _logs_at(self, when: datetime, label: str) -> None:
        """Back to the run screen, on its Logs tab at `when`."""
        stack = self.app.screen_stack
        below = stack[stack.index(self) - 1] if self in stack and stack.index(self) else None
        self.dismiss(None)
        if below is not None:
            below.post_message(OpenLogsAt(when, label))

    def action_copy(self) -> None:
        path, rows = self.write_csv()
        self.notify(f"Wrote {rows:,} rows to {path}", title="CSV", markup=False)

    def write_csv(self) -> tuple[Path, int]:
        """Write the visible points' samples as CSV (`state.export`) to the data dir's
        `exports/`; returns (path, rows)."""
        from ito_tui import paths

        seqs = {p.seq for p in self.visible_points()}
        samples = [s for s in self.pages.samples() if s.seq in seqs]
        folder = paths.ensure(paths.data_dir() / "exports")
        return write_csv(folder, self.run_id, self.key, samples, self._client_metrics()), len(
            samples
        )
