"""The spec form against a backend that gives no answer to a pre-flight estimate: it asks
again, at most once a second whatever `Retry-After` says, says so on the panel, and the
estimate lands without the operator touching the form.

desk_sim behind `Tamper`, which answers the first two `POST /v1/estimates` with a 503
carrying `Retry-After: 0`.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from textual.widgets import Input

from ito_tui.client import ItoClient, RetryPolicy
from ito_tui.tui import make_app
from ito_tui.tui.screens.spec_form import SpecFormScreen
from ito_tui.tui.widgets.estimate import EstimatePanel
from tests.support.apps import settings
from tests.support.isolation import isolate_user_dirs
from tests.support.waiting import wait_for
from tests.tui.test_shell_pilot import fresh_estimate, open_booking

from .conftest import Tampered

pytestmark = [pytest.mark.faults]

ESTIMATES = r"^/v1/estimates$"
POST_ESTIMATE = ("POST", "/v1/estimates")


async def test_an_estimate_without_an_answer_is_asked_again_once_a_second_at_most(
    tampered: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_user_dirs(tmp_path, monkeypatch)
    t: Tampered = tampered()
    t.tamper.answer(
        ESTIMATES, lambda i: (503, {"Retry-After": "0"}) if i < 2 else None, methods=("POST",)
    )
    # The client's own retries off: the form's are the ones under test.
    client = ItoClient(
        t.url, token=SecretStr("s3cret"), retry=RetryPolicy(max_attempts=1, backoff_base_s=0.01)
    )
    app = make_app(settings(backend_url=t.url), client)
    async with app.run_test(size=(100, 32)) as pilot:
        form = await open_booking(pilot, "bk_h100_1n")
        assert isinstance(form, SpecFormScreen)
        # All at once, as a paste would: one spec, so every POST below is for it.
        typed = {
            "model_size": "1.5B",
            "data_ref": "catalog://fineweb-edu@1.3",
            "budget_usd": "50000",
        }
        for name, text in typed.items():
            form.query_one(f"#f-{name}", Input).value = text
        panel = form.query_one(EstimatePanel)
        await wait_for(
            pilot,
            lambda: "asking again in" in (panel.error or ""),
            20,
            lambda: f"the panel to say it asks again; it says {panel.error!r}",
        )
        assert "Estimate unavailable" in panel.render().plain
        panel = await fresh_estimate(pilot, form)
        assert panel.error is None and panel.estimate is not None
        assert not panel.estimate.refused
    posts = [at for method, path, at in t.tamper.requests if (method, path) == POST_ESTIMATE]
    assert len(posts) == 3, posts
    gaps = [b - a for a, b in itertools.pairwise(posts)]
    assert all(gap >= 0.95 for gap in gaps), gaps  # `Retry-After: 0` asks in vain
