"""The run summary panel: once a run has ended, what it took and cost against its estimate,
its interruptions and rollbacks, and how each stage ended (`state.summary.RunEnd`).

It sits in the run screen's left column above the stage detail, under the stage list,
which it never hides. Every line comes from `state/summary_text.py` (the rows `ito-tui
status` prints, in a narrow panel's form); backend text is rendered literally.
"""

from __future__ import annotations

import textwrap

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.state.summary import RunEnd
from ito_tui.state.summary_text import estimate_rows, fact_rows, outcome_brief

LABEL = 11
"""Cells of the label column (`interrupts`, `long-context` is cut to fit)."""
VERDICT_FROM = 46
"""From this width the table has its fourth column, where the run fell (`p50–p90`)."""


def summary_lines(end: RunEnd, width: int) -> Text:
    """The panel's text at `width` cells: a heading, the actual-against-estimate table,
    then the facts, each value wrapped under its own column."""
    text = Text(no_wrap=False, overflow="fold")
    text.append("Run summary", style="bold")
    text.append(f" · {outcome_brief(end)}\n")
    rows = estimate_rows(end)
    actual = max(6, *(len(r[1]) for r in rows))
    estimate = max(8, *(len(r[2]) for r in rows))
    verdict = width >= VERDICT_FROM
    head = f"{'':<{LABEL}}{'actual':<{actual + 2}}{'estimate':<{estimate + 1}}"
    text.append(head.rstrip() + "\n", style="dim")
    for label, value, est, where in rows:
        line = f"{label:<{LABEL}}{value:<{actual + 2}}{est:<{estimate + 1}}"
        text.append(line.rstrip())
        if verdict and where:
            text.append(f" {where}", style="dim")
        text.append("\n")
    pad = " " * LABEL
    room = max(8, width - LABEL)
    for label, value in fact_rows(end):
        text.append(f"{label[: LABEL - 1]:<{LABEL}}", style="dim")
        # Wrapped at words, each line under the value's column (`· gate✗ gsm8k …`).
        chunks = textwrap.wrap(value, room, break_on_hyphens=False) or [""]
        text.append(("\n" + pad).join(chunks) + "\n")
    text.rstrip()
    return text


class RunSummaryPanel(Widget):
    """Hidden while the run goes on; the summary once `end` is set."""

    DEFAULT_CSS = """
    RunSummaryPanel {
        display: none;
        height: auto;
        padding: 0 1 1 1;
        border-bottom: hkey $panel-lighten-1;
    }
    RunSummaryPanel.-ended { display: block; }
    """

    end: reactive[RunEnd | None] = reactive(None, layout=True)
    """The finished run's summary, or None to hide the panel."""

    def watch_end(self, end: RunEnd | None) -> None:
        self.set_class(end is not None, "-ended")

    def render(self) -> RenderableType:
        end = self.end
        if end is None:
            return ""
        return summary_lines(end, self.size.width)
