"""The run strip under the header: run state, current stage, booking, and spend vs budget."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from ito_tui.state import RunState

from .runfmt import safe, stage_label
from .spend_bar import SpendBar


def status_text(s: RunState) -> Text:
    """`running · pretrain · booking bk_…`, or `ENDED: gate_failed · …` once over."""
    stage = stage_label(s.current_stage) if s.current_stage else "–"
    head = f"ENDED: {s.outcome}" if s.terminal else safe(s.state)
    return Text(f"{head} · {stage} · booking {safe(s.booking_id or '–')}")


class RunStrip(Horizontal):
    """One line: what the run is doing, and its spend bar with the 80%/95% marks."""

    DEFAULT_CSS = """
    RunStrip { height: 1; padding: 0 1; }
    RunStrip > #run-status { width: auto; max-width: 60%; text-style: bold; margin-right: 2; }
    RunStrip > SpendBar { width: 1fr; min-width: 24; }
    """

    run: reactive[RunState | None] = reactive(None, always_update=True, repaint=False)
    """The run state to show (assigned on every event: the children repaint themselves,
    and only when what they show changed)."""

    def compose(self) -> ComposeResult:
        yield Static(id="run-status", markup=False)
        yield SpendBar(id="spend")

    _status = ""

    def watch_run(self, s: RunState | None) -> None:
        if s is None:
            return
        status = status_text(s)
        if status.plain != self._status:
            # Assigned on every event; an update lays out the whole screen, so only on change.
            self._status = status.plain
            self.query_one("#run-status", Static).update(status)
        if s.spend is not None:
            spend = self.query_one(SpendBar)
            spend.budget = s.spend.budget_usd
            spend.spent = s.usd_spent or s.spend.usd_spent
