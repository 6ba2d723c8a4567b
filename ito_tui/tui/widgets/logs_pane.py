"""The run screen's Logs tab: the run's job log (API.md v1.1 `runs.logs`).

Placeholder of the layout (issue 18); the pane itself is being written.
"""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static


class LogsPane(Widget):
    """The job log of run `run_id`: follows the log stream while shown."""

    DEFAULT_CSS = "LogsPane { height: 1fr; }"

    def __init__(self, run_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        yield Static("Logs: not written yet", markup=False)

    def show_around(self, when: datetime, label: str = "") -> None:
        """Show the lines around `when` (a fault, a gate result), follow mode off."""
