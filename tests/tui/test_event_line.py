"""An event-log line opens in full: the whole literal text, wrapped, its fields, and a copy."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from textual.pilot import Pilot

from ito_tui.state.eventlog import LogEntry
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.event_line import EventLineScreen, data_fields, line_of
from ito_tui.tui.screens.runs import RunsScreen

from .pipeline_fakes import FakeRunClient
from .shell_fakes import NOW
from .shell_helpers import isolated_user_dirs, screen_text, settings, wait_for  # noqa: F401

TEXT = (
    "gate gate_5a95a2862915_pretrain passed: mmlu acc_5shot 82.102 ± 0.380 (needs >= 65.1), "
    "[bold]hellaswag[/bold] acc_norm 79.4, arc_challenge 61.0; ladder skipped: curated data "
    "needs no ladder \x1b[31m"
)
"""Longer than any pane, with what would be markup and a terminal escape if not literal."""


def entry() -> LogEntry:
    return LogEntry(4211, NOW - timedelta(minutes=3), "gate.passed", "gates", "info", TEXT)


def app() -> ItoApp:
    return make_app(
        settings(backend_url="http://127.0.0.1:8741"),
        FakeRunClient(),
        clock=lambda: NOW,
        start="runs",
    )


async def open_line(pilot: Pilot[Any], shell: ItoApp, line: LogEntry) -> EventLineScreen:
    """The runs list up, then the line opened over it, as the run screen opens it."""
    await wait_for(pilot, lambda: isinstance(shell.screen, RunsScreen))
    shell.push_screen(EventLineScreen(line))
    await wait_for(pilot, lambda: isinstance(shell.screen, EventLineScreen))
    return shell.screen  # type: ignore[return-value]  # checked just above


async def test_the_whole_line_shows_literally_wrapped_with_its_fields() -> None:
    shell = app()
    async with shell.run_test(size=(80, 24)) as pilot:
        screen = await open_line(pilot, shell, entry())
        text = screen.query_one("#event-line-text")
        # Wrapped over several rows of the 80-column terminal, cut nowhere.
        assert text.size.height >= 3
        shown = screen_text(pilot)
        for piece in ("gate_5a95a2862915_pretrain", "[bold]hellaswag[/bold]", "needs no ladder"):
            assert piece in shown
        assert "\x1b" not in shown  # the escape is made visible, never sent
        for field in ("seq", "4211", "gate.passed", "gates", "info", "UTC"):
            assert field in shown


async def test_c_copies_the_whole_line_and_escape_goes_back() -> None:
    shell = app()
    async with shell.run_test(size=(120, 40)) as pilot:
        await open_line(pilot, shell, entry())
        await pilot.press("c")
        assert shell.clipboard == line_of(entry())
        assert "[bold]hellaswag[/bold]" in shell.clipboard and "4211" in shell.clipboard
        assert "\x1b" not in shell.clipboard
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(shell.screen, RunsScreen))


def test_the_event_data_reads_as_dotted_fields() -> None:
    event = SimpleNamespace(data={"gate": {"id": "g[1]", "results": [1, 2]}, "note": None})
    line = entry()._replace(event=event)
    assert data_fields(line) == [("gate.id", "g[1]"), ("gate.results", "1, 2"), ("note", "null")]
    assert data_fields(entry()) == []  # a line without its event has only its own fields
