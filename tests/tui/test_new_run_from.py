"""`n` — a new run from an ended run's spec — over a fake backend: the booking picker when
the run's booking is busy (snapshots 80x24 and 120x40), the form filled with every field,
and nothing created before the form's confirm, then exactly the old spec on the new booking."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from ito_tui.desk_sim.catalog import seed_bookings
from ito_tui.tui.forms import FormValues
from ito_tui.tui.screens.booking_choice import BookingChoice
from ito_tui.tui.screens.confirm_submit import ConfirmSubmitModal
from ito_tui.tui.screens.spec_form import SpecFormScreen
from tests.support.apps import SIZE_IDS, SIZES, settle, settle_quiet, snapshot_app
from tests.support.waiting import wait_for

from .pipeline_fakes import NOW, RUN_ID, FakeRunClient, gate_fail_script, run_snapshot
from .shell_helpers import isolated_user_dirs  # noqa: F401 (autouse fixture)
from .test_run_summary_snapshots import ESTIMATE

BOOKING = "bk_h100_4n_ib"
SPEC: dict[str, Any] = {
    "booking_id": BOOKING,
    "model_size": "1.5B",
    "data_ref": "hf://allenai/dolmino-mix@v1",
    "data_kind": "custom",
    "target_capability": "math-reasoning",
    "budget_usd": "21000.00",
    "post_training": "dpo",
    "target_tokens": 40_000_000_000,
    "seq_len": 4096,
}


def client_with(busy: bool) -> FakeRunClient:
    """run_7f3a9c (its gate failed) on BOOKING, busy with another run or free."""
    bookings = seed_bookings(NOW)
    if busy:
        bookings = [
            b.model_copy(update={"active_run_id": "run_0ther"}) if b.booking_id == BOOKING else b
            for b in bookings
        ]
    run = run_snapshot(booking_id=BOOKING, spec=SPEC, estimate=ESTIMATE)
    return FakeRunClient(script=gate_fail_script().events, run_model=run, booking_list=bookings)


async def press_n(pilot: Pilot[Any], opens: type[Any]) -> None:
    """Press `n` on the ended run's screen once it is drawn; wait for `opens` on top."""
    await settle(pilot)
    await pilot.press("n")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, opens), what=opens.__name__)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_new_run_booking_picker(snap_compare: Any, size: tuple[int, int]) -> None:
    """You should see, over the ended run's screen, "New run from this spec: pick a
    booking", why (run_7f3a9c's booking bk_h100_4n_ib cannot take it: busy — run run_0ther
    is using it), then the free completed bookings one a line (id, GPU, nodes × GPUs, ends
    in …, bk_b200_16n_ib's `✗ 1 unhealthy`), the first highlighted; no busy, pending or
    expired one."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle_quiet(pilot)  # the run's replayed alerts, before the modal holds them
        await press_n(pilot, BookingChoice)
        await settle_quiet(pilot)

    app = snapshot_app(client_with(busy=True), now=NOW, start=RUN_ID)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_n_fills_every_field_and_nothing_is_sent_before_the_confirm() -> None:
    client = client_with(busy=True)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await press_n(pilot, BookingChoice)
        picker = app.screen
        assert isinstance(picker, BookingChoice)
        free = [b.booking_id for b in picker.bookings]
        assert BOOKING not in free and "bk_h200_1n_pending" not in free and free
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SpecFormScreen), what="the form")
        form = app.screen
        assert isinstance(form, SpecFormScreen)
        assert form.booking.booking_id == free[1]
        assert form.values() == FormValues(
            model_size="1.5B",
            data_ref="hf://allenai/dolmino-mix@v1",
            data_kind="custom",
            target_capability="math-reasoning",
            budget_usd="21000.00",
            post_training="dpo",
            target_tokens="40000000000",
            seq_len="4096",
        )
        await wait_for(pilot, form.submittable, what="a fresh estimate")
        confirming = lambda: isinstance(app.screen, ConfirmSubmitModal)  # noqa: E731
        await pilot.press("ctrl+g")
        await wait_for(pilot, confirming, what="the confirm")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is form, what="back on the form")
        assert client.created == []  # the confirm said no: nothing was sent
        await pilot.press("ctrl+g")
        await wait_for(pilot, confirming, what="the confirm again")
        await pilot.click("#confirm-submit")
        await wait_for(pilot, lambda: bool(client.created), what="the submission")
        (spec, key), *more = client.created
        assert not more and key
        # The old spec, every field, on the booking picked.
        sent = spec.model_dump(mode="json", exclude={"sim"})
        assert sent == {**SPEC, "booking_id": free[1]}


async def test_n_on_a_free_booking_opens_the_form_on_it_and_esc_sends_nothing() -> None:
    client = client_with(busy=False)
    app = snapshot_app(client, now=NOW, start=RUN_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await press_n(pilot, SpecFormScreen)
        form = app.screen
        assert isinstance(form, SpecFormScreen) and form.booking.booking_id == BOOKING
        assert form.values().data_ref == SPEC["data_ref"]
        # The form estimates its filled spec (after its debounce: on a loaded machine
        # later than the form's first frame); then Escape leaves it and sends nothing.
        await wait_for(pilot, lambda: bool(client.estimates), what="the form's estimate")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SpecFormScreen), what="back")
        assert client.created == []  # estimated, never submitted
