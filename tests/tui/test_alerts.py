"""Alerter: a burst of one kind is the first alert at once, then one summary with the count."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from ito_tui.tui import alerts
from ito_tui.tui.alerts import COALESCE_S, Alert, Alerter

SLO = Alert("slo", "SLO breached", "run_x: fault resume took 21 min (resume < 15 min).")
BUDGET = Alert("budget", "Budget warning", "run_x: $80 of $100 spent (≥ 80%).")


class FakeApp:
    """What `Alerter` uses of an App: notify, bell, set_timer (fired by the test), screen."""

    def __init__(self) -> None:
        self.settings = None
        self.screen = SimpleNamespace()
        self.toasts: list[tuple[str, str]] = []
        self.bells = 0
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def notify(self, message: str, *, title: str = "", **_: Any) -> None:
        self.toasts.append((title, message))

    def bell(self) -> None:
        self.bells += 1

    def set_timer(self, delay: float, callback: Callable[[], None]) -> object:
        self.timers.append((delay, callback))
        return object()

    def fire(self) -> None:
        """Run the timers that are due (all of them: the test moves the clock)."""
        due, self.timers = self.timers, []
        for _, callback in due:
            callback()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(alerts, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


def test_a_burst_is_the_first_alert_then_one_summary_with_the_count(clock: list[float]) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    for i in range(3000):
        clock[0] = 1000.0 + i * 0.0002
        alerter.alert(SLO)
    # The first at once (an operator away from the pane hears it); the rest only counted.
    assert app.toasts == [("SLO breached", SLO.message)] and app.bells == 1
    assert len(app.timers) == 1 and app.timers[0][0] == pytest.approx(COALESCE_S, abs=0.7)
    clock[0] = 1000.0 + COALESCE_S
    app.fire()
    title, message = app.toasts[-1]
    assert title == "3,000 SLO breaches"
    assert message.startswith("2,999 more in under 1 s") and SLO.message in message
    assert app.bells == 1  # one bell per burst
    assert len(alerter.sent) == alerts.MAX_SENT  # every alert counted, the newest kept


def test_a_storm_that_goes_on_is_one_summary_per_window_and_ends(clock: list[float]) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    alerter.alert(SLO)
    for second in (0.5, 1.5, 2.5, 3.5, 4.5, 5.5):  # a timer is due at 2, 4 and 6
        clock[0] = 1000.0 + second
        if app.timers and second > 2 * len(app.toasts):
            app.fire()
        alerter.alert(SLO)
    clock[0] = 1006.0
    app.fire()
    assert [t for t, _ in app.toasts] == [
        "SLO breached",
        "3 SLO breaches",
        "5 SLO breaches",
        "7 SLO breaches",
    ]
    assert app.toasts[2][1].startswith("2 more in 1 s")
    # Quiet for a window: the next one is a new burst, raised at once and rung.
    clock[0] = 1010.0
    alerter.alert(SLO)
    assert app.toasts[-1] == ("SLO breached", SLO.message) and app.bells == 2


def test_kinds_do_not_coalesce_with_each_other(clock: list[float]) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    alerter.alert(SLO)
    alerter.alert(SLO)
    alerter.alert(BUDGET)
    assert [t for t, _ in app.toasts] == ["SLO breached", "Budget warning"] and app.bells == 2


def test_a_late_summary_counts_what_came_while_it_was_due(clock: list[float]) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    alerter.alert(SLO)
    alerter.alert(SLO)
    clock[0] = 1000.0 + COALESCE_S + 1  # the loop was busy: the summary is late
    alerter.alert(SLO)
    assert len(app.toasts) == 1 and app.bells == 1
    app.fire()
    assert app.toasts[-1][0] == "3 SLO breaches"


def test_no_toast_asked_for_means_no_summary_toast(clock: list[float]) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    proposal = Alert("proposal", "Needs approval", "run_x: reduce_lr proposed.")
    alerter.alert(proposal, toast=False)  # its modal opened: the modal is the notice
    alerter.alert(proposal, toast=False)
    app.fire()
    assert app.toasts == [] and app.bells == 1
