"""An event-log line opens in full: the whole literal text, wrapped, its fields, and a copy."""

from __future__ import annotations

from datetime import timedelta

from ito_tui.state.eventlog import LogEntry
from ito_tui.tui import ItoApp, make_app
from ito_tui.tui.screens.event_line import EventLineScreen, line_of
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


async def test_the_whole_line_shows_literally_wrapped_with_its_fields() -> None:
    shell = app()
    async with shell.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(shell.screen, RunsScreen))
        shell.push_screen(EventLineScreen(entry()))
        await wait_for(pilot, lambda: isinstance(shell.screen, EventLineScreen))
        screen = shell.screen
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
        await wait_for(pilot, lambda: isinstance(shell.screen, RunsScreen))
        shell.push_screen(EventLineScreen(entry()))
        await wait_for(pilot, lambda: isinstance(shell.screen, EventLineScreen))
        await pilot.press("c")
        assert shell.clipboard == line_of(entry())
        assert "[bold]hellaswag[/bold]" in shell.clipboard and "4211" in shell.clipboard
        assert "\x1b" not in shell.clipboard
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(shell.screen, RunsScreen))
