"""A Logs row is built from segments (not `rich.text.Text`): whatever the search marks,
the row says the line's text exactly once, in order, at the widget's width."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from textual.app import App, ComposeResult

from ito_tui.state.logbuffer import ShownLine
from ito_tui.tui.themes import app_variable_defaults
from ito_tui.tui.widgets.log_rows import prefix_of
from ito_tui.tui.widgets.log_view import LogView

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TEXTS = [
    "[Rank 8] Watchdog caught collective operation timeout",
    "Straße STRASSE strasse",  # casefold makes 'ß' two letters: the marks move, not the text
    "ﬁne ﬂow İstanbul",  # more letters that change length when folded
    "宽字符 wide 字符 cells",
    "",
    "x" * 300,  # longer than the row
]


class Rows:
    def __init__(self, lines: list[ShownLine]) -> None:
        self.lines = lines

    def __len__(self) -> int:
        return len(self.lines)

    def line(self, i: int) -> ShownLine:
        return self.lines[i]


class ViewApp(App[None]):
    def __init__(self, view: LogView) -> None:
        super().__init__()
        self.view = view

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # The app's own colour variables ($gate-failed …), as ItoApp defines them.
        return app_variable_defaults(self.current_theme.to_color_system().generate())

    def compose(self) -> ComposeResult:
        yield self.view


def shown(seq: int, text: str, *, cut: bool = False) -> ShownLine:
    return ShownLine(seq, AT, 3, None, "error", "nccl", text, cut, None, None, False)


async def test_every_search_leaves_each_row_its_text_once_in_order() -> None:
    lines = [shown(i, text, cut=i == 2) for i, text in enumerate(TEXTS)]
    view = LogView(Rows(lines))
    async with ViewApp(view).run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        width = view.scrollable_content_region.width
        searches: list[tuple[str, re.Pattern[str] | None]] = [
            ("", None),
            ("strasse", None),
            ("watchdog", None),
            ("i", None),
            ("字", None),
            (r"/\w+/", re.compile(r"\w+")),
            ("/x*/", re.compile("x*")),  # matches empty strings too
        ]
        for needle, pattern in searches:
            view.set_needle(needle, pattern)
            view.current = 1
            for y, line in enumerate(lines):
                strip = view.render_line(y)
                want = prefix_of(line, width) + line.text + (" ✂ cut" if line.cut else "")
                assert strip.text[: len(want)] == want[: len(strip.text)], (needle, line.text)
                assert strip.cell_length == width, (needle, line.text)
                if len(want) < width:
                    assert strip.text[len(want) :].strip() == ""
