"""DecisionsScreen: every proposal across runs, newest first — the decision trail."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer


class DecisionsScreen(Screen[None]):
    """Every proposal across runs: who decided what, when, with which comment."""

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")
        yield Footer()
