"""The run screen's Nodes tab: the run's fleet (API.md v1.1 `runs.fleet`).

Placeholder of the layout (issue 18); the pane itself is being written.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static


class NodesPane(Widget):
    """The fleet of run `run_id`: quorum, replicas, nodes; refreshed while shown."""

    DEFAULT_CSS = "NodesPane { height: 1fr; }"

    def __init__(self, run_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        yield Static("Nodes: not written yet", markup=False)
