"""CapabilityScreen: the backend lacks a capability this flow needs — say which, and stop."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Static

from ito_tui.textsafe import safe
from ito_tui.tui.first_show import StyledOnFirstShow
from ito_tui.tui.session import shell
from ito_tui.tui.widgets.header import HeaderStrip
from ito_tui.tui.widgets.steady_footer import SteadyFooter

_WHAT = {
    "runs.create": "starting a training run",
    "estimates.create": "pre-flight estimates of a training spec",
    "bookings.read": "listing your bookings",
    "runs.read": "listing and opening runs",
    "runs.events": "following a run live",
    "proposals.decide": "deciding restart proposals",
    "proposals.read": "reading proposals and who decided them (the Decisions screen)",
    "runs.cancel": "cancelling a run",
}


class CapabilityScreen(StyledOnFirstShow, Screen[None]):
    """Names the missing capability; offers going back or quitting, never a substitute."""

    CSS_PATH = "capability.tcss"
    AUTO_FOCUS = "Button"

    BINDINGS = [
        Binding(
            "escape",
            "back",
            "Back",
            id="capability.back",
            tooltip="Return to the previous screen",
        ),
        Binding("q", "app.quit", "Quit", id="capability.quit", tooltip="Leave ito-tui", show=False),
    ]

    def __init__(
        self, capability: str, *, status: str = "not_implemented", detail: str = ""
    ) -> None:
        super().__init__()
        self.capability = capability
        self.status = status
        self.detail = detail

    def compose(self) -> ComposeResult:
        session = shell(self).session
        name = safe(self.capability)
        what = _WHAT.get(self.capability, "this step")
        yield HeaderStrip(
            backend_host=session.backend_host,
            operator=session.operator,
            connection=session.connection,
            demo=session.demo,
            read_only=session.read_only,
            title="Not available",
        )
        with VerticalScroll(id="capability-box", classes="message-box"):
            yield Static(
                Content.assemble(("Missing capability: ", "bold"), (name, "bold $needs-human")),
                id="capability-title",
            )
            lines: list[str | tuple[str, str]] = [
                "The backend at ",
                (session.backend_host, "bold"),
                " does not provide ",
                (name, "bold"),
                f" yet (status: {safe(self.status)}), so {what} is not possible here.",
            ]
            if self.detail:
                lines += ["\n\n", ("Backend says: ", "$text-muted"), safe(self.detail)]
            lines += [
                "\n\n",
                (
                    "There is no way around this from ito-tui: it does not train "
                    "anything itself and uses no substitute endpoint. Once the backend "
                    "provides the capability, this step works unchanged.",
                    "$text-muted",
                ),
            ]
            yield Static(Content.assemble(*lines), id="capability-detail")
            with Horizontal(id="capability-buttons"):
                if self._can_go_back():
                    yield Button("Back", id="back", action="screen.back")
                yield Button("Quit", id="quit", action="app.quit")
        yield SteadyFooter()

    def _can_go_back(self) -> bool:
        return len(self.app.screen_stack) > 1

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self._can_go_back()
        return True

    def action_back(self) -> None:
        self.dismiss()
