"""`SteadyInput`, the app's one text field: a field the operator tabs away from shows its
value from the start, not from where the cursor left the view."""

from __future__ import annotations

from textual.app import App, ComposeResult

from ito_tui.tui.widgets.steady_input import SteadyInput

DATA_REF = "catalog://fineweb-edu@1.3"


class TwoFields(App[None]):
    CSS = "SteadyInput { width: 16; }"

    def compose(self) -> ComposeResult:
        yield SteadyInput(id="data")
        yield SteadyInput(id="budget")


def shown(field: SteadyInput) -> str:
    """The text the field draws on its one line (Textual's line API)."""
    return field.render_line(0).text.strip()


async def test_a_long_value_is_shown_from_its_start_once_the_field_loses_focus() -> None:
    app = TwoFields()
    async with app.run_test() as pilot:
        field = app.query_one("#data", SteadyInput)
        field.focus()
        await pilot.press(*DATA_REF)
        await pilot.pause()
        typing = shown(field)
        # While typing, the view follows the cursor: the value's end, its start cut.
        assert len(typing) > 8 and DATA_REF.endswith(typing), typing
        assert not typing.startswith("catalog"), typing
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is app.query_one("#budget")
        assert field.value == DATA_REF
        assert DATA_REF.startswith(shown(field)) and shown(field).startswith("catalog://")
        # Back in the field: all of it selected, the view at the cursor (its end) again.
        await pilot.press("shift+tab")
        await pilot.pause()
        assert DATA_REF.endswith(shown(field)), shown(field)
