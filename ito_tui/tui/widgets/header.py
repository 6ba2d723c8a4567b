"""HeaderStrip: one line with the backend host, operator, connection state, what needs you
and a DEMO badge."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ito_tui.format import duration
from ito_tui.textsafe import visible

_CONNECTION_STYLES = (
    ("live", "$gate-passed", "●"),
    ("resynced", "$gate-passed", "●"),
    ("connecting", "$gate-running", "○"),
    ("reconnecting", "$needs-human", "◌"),
    ("offline", "$gate-failed", "✗"),
    ("closed", "$stale", "■"),
)


def connection_style(connection: str) -> tuple[str, str]:
    """Style and glyph for a connection state such as `live` or `reconnecting in 3 s`."""
    for prefix, style, glyph in _CONNECTION_STYLES:
        if connection.startswith(prefix):
            return style, glyph
    return "$foreground", "?"


class HeaderStrip(Widget):
    """The persistent top line of every screen.

    Shows the backend host only (never a path or credentials), the operator,
    the connection state as a glyph *and* a word, and DEMO whenever the backend
    is simulated. Text from the backend is rendered literally.

    `needs_you` pending proposals across every run show as `⚠ 2 need you · 2m41s`, the
    time being the nearest expiry (`needs_you_left_s`; the app refreshes it); a run
    screen's `warning` (`⚠ p90 past booking end`) shows beside it. Like the badges, those
    are never cut: the rest of the line gives way, the backend host
    first, then the operator, so the title (a run id) and the connection state stay.
    """

    DEFAULT_CSS = """
    HeaderStrip {
        dock: top;
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
    }
    """

    backend_host: reactive[str] = reactive("")
    operator: reactive[str | None] = reactive(None)
    connection: reactive[str] = reactive("connecting")
    demo: reactive[bool] = reactive(False)
    title: reactive[str] = reactive("")
    read_only: reactive[bool] = reactive(False)
    needs_you: reactive[int] = reactive(0)
    needs_you_left_s: reactive[float | None] = reactive(None)
    warning: reactive[str] = reactive("")
    """The run's own warning (`⚠ p90 past booking end`): a badge, never cut."""

    def __init__(
        self,
        *,
        backend_host: str = "",
        operator: str | None = None,
        connection: str = "connecting",
        demo: bool = False,
        title: str = "",
        read_only: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(HeaderStrip.backend_host, backend_host)
        self.set_reactive(HeaderStrip.operator, operator)
        self.set_reactive(HeaderStrip.connection, connection)
        self.set_reactive(HeaderStrip.demo, demo)
        self.set_reactive(HeaderStrip.title, title)
        self.set_reactive(HeaderStrip.read_only, read_only)

    def render(self) -> Content:
        badges: list[Content] = []
        if self.needs_you:
            badges.append(
                Content.styled(
                    needs_you_text(self.needs_you, self.needs_you_left_s), "bold $needs-human"
                )
            )
        if self.warning:
            badges.append(Content.styled(visible(self.warning), "bold $warning"))
        if self.read_only:
            badges.append(Content.styled(" READ-ONLY ", "bold reverse $needs-human"))
        if self.demo:
            badges.append(Content.styled(" DEMO ", "bold reverse $demo"))
        badge = Content(" ").join(badges)
        room = self.size.width - (badge.cell_length + 1 if badges else 0)
        # What gives way on a narrow terminal, first to last: the backend host, then the
        # operator, then the end of the line. The title (the screen, a run id) and the
        # connection state stay as long as anything can.
        for shown in (("host", "operator"), ("operator",), ()):
            content = self._left(shown)
            if content.cell_length <= room:
                break
        if not badges:
            return content
        # Badges are never cut off: the rest gives way on a narrow terminal.
        content = content.truncate(max(0, room), ellipsis=True, pad=True)
        return Content.assemble(content, " ", badge)

    def _left(self, shown: tuple[str, ...]) -> Content:
        """The line before the badges, with the optional parts in `shown`."""
        style, glyph = connection_style(self.connection)
        left: list[str | tuple[str, str]] = [(" ito ", "bold $primary")]
        if self.title:
            left += ["· ", (visible(self.title), "bold"), " "]
        if "host" in shown:
            left += ["· ", (visible(self.backend_host) or "no backend", "$foreground"), " "]
        if self.operator and "operator" in shown:
            left += ["· ", (visible(self.operator), "$foreground"), " "]
        left += ["· ", (f"{glyph} {visible(self.connection)}", style)]
        return Content.assemble(*left)


def needs_you_text(count: int, left_s: float | None) -> str:
    """`⚠ 1 needs you · 2m41s`: pending proposals and the nearest one's time to expiry."""
    text = f"⚠ {count:,} {'needs' if count == 1 else 'need'} you"
    if left_s is not None:
        text += f" · {duration(max(0.0, left_s))}"
    return text
