"""The spec form speaks the form's words: a refusal's hint names `Budget USD`, not the
API's `budget_usd`; the estimate pane names the stages as every screen does."""

from __future__ import annotations

from typing import Any

from ito_tui.describe import SPEC_LABELS
from ito_tui.tui.screens.spec_form import SpecFormScreen
from ito_tui.tui.widgets.field_row import FieldRow

from .shell_helpers import isolated_user_dirs, screen_text  # noqa: F401  (autouse fixture)
from .test_shell_pilot import SIZE, app_for, fill, fresh_estimate, open_booking


async def test_a_refusal_names_the_forms_fields_and_the_stages_their_labels(sim: Any) -> None:
    app, _client = app_for(sim)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_booking(pilot, "bk_h100_4n_ib")
        assert isinstance(form, SpecFormScreen)
        await fill(pilot, form, data_ref="catalog://fineweb-edu@1.3", budget_usd="300")
        panel = await fresh_estimate(pilot, form)
        assert panel.estimate is not None and panel.estimate.refused
        assert any("budget_usd" in (r.suggestion or "") for r in panel.estimate.refusals)
        text = "\n".join(line.plain for line in panel.lines(80))
        assert f"→ Raise {SPEC_LABELS['budget_usd']} to at least $" in text
        assert f"or cut {SPEC_LABELS['target_tokens']} to about" in text
        assert "budget_usd" not in text and "target_tokens" not in text
        error = form.query_one("#row-budget_usd", FieldRow).error
        assert error and "budget_usd" not in error
        assert SPEC_LABELS["budget_usd"] in screen_text(pilot)  # the label the hint names
        # The stage table as the pane draws it: its header, then one row per stage.
        drawn = [line.plain for line in panel.lines(80)]
        start = next(i for i, line in enumerate(drawn) if line.startswith("Stage "))
        stages = drawn[start : start + 1 + len(panel.estimate.stages)]
        assert any(s.startswith("data prep ") for s in stages), stages
        assert any(s.startswith("mid-train ") for s in stages), stages
        assert not any("_" in s.split()[0] for s in stages[1:]), stages
