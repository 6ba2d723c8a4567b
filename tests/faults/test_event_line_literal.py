"""A backend's words that look like markup open in full literally: Enter on the log line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ito_tui.tui.screens.event_line import EventLineScreen, line_of
from ito_tui.tui.widgets.eventlog import EventLogView
from tests.tui.pipeline_live import live_app, shown_pipeline, start_run, wait_for

from .conftest import Tampered

pytestmark = pytest.mark.faults
REASON = (
    "[bold]curated[/bold] data (note-7731): the 150M ladder pre-check is only for custom data, "
    "[link=https://example.invalid]see the runbook[/link] \x1b]2;owned\x07 and the notes of the "
    "data team about why ladders are skipped on curated sets, which run long; end-of-reason"
)
"""Markup, a link and a terminal title escape in a reason longer than the log's bound on a
line (240 characters): the line is cut there, the event's own field is not."""


async def test_enter_opens_a_markup_looking_line_in_full_and_literal(
    tampered: Any, tmp_path: Path
) -> None:
    t: Tampered = tampered(speed=300_000.0)

    def hook(envelope: dict[str, Any]) -> dict[str, Any]:
        if envelope.get("type") == "stage.skipped":
            return {**envelope, "data": {**envelope["data"], "reason": REASON}}
        return envelope

    t.tamper.event_hook(hook)
    run_id = await start_run(t.url, "happy")
    app, client = live_app(t.url, run_id, tmp_path)
    async with client, app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.run_state.terminal, 60, "the run's end")
        await pilot.press("3", "slash", *"note-7731", "enter")
        log = screen.query_one(EventLogView)
        await wait_for(pilot, lambda: log.selected is not None and log.search, 5, "the search")
        log.focus()
        await pilot.pause()
        selected = log.selected
        assert selected is not None and selected.type == "stage.skipped"
        # The pane cuts it: the end of the reason is not on the log's line.
        assert "end-of-reason" not in str(log.render())
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, EventLineScreen), 5, "the line")
        opened = app.screen
        assert isinstance(opened, EventLineScreen)
        text = str(opened.query_one("#event-line-text").render())
        # Whole and literal: the brackets are text, the escape made visible, nothing cut
        # but at the log's bound; wrapped over several rows.
        assert text == selected.text and " skipped: [bold]curated[/bold] data" in text
        assert "[link=https://example.invalid]" in text
        assert "\x1b" not in text and "\x07" not in text
        assert opened.query_one("#event-line-text").size.height >= 2
        # The event's fields: the reason whole, to its end, as literal as the line.
        fields = str(opened.query_one("#event-line-fields").render())
        assert "reason" in fields and "[bold]curated[/bold]" in fields
        assert "end-of-reason" in fields and "\x1b" not in fields
        await pilot.press("c")
        assert app.clipboard == line_of(selected) and "[bold]curated[/bold]" in app.clipboard
