"""The run view's repaint scheduler on a fake clock and host: coalescing, rates, hidden panels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ito_tui.tui.repaint import CHART_INTERVAL_S, TABLE_INTERVAL_S, Repaints


class FakeHost:
    """A screen's `set_timer`/`call_later` on a clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.soon: list[Callable[[], Any]] = []
        self.timers: list[tuple[float, Callable[[], Any]]] = []
        self.wakeups = 0
        self.closing = False
        """As a screen being removed: `call_later` refuses (Textual's, on a closing pump)."""

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> None:
        self.timers.append((self.now + delay, callback))

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        if self.closing:
            return False
        self.soon.append(callback)
        return True

    def run_soon(self) -> None:
        """What the current wake-up runs after its handler (Textual's `call_later`)."""
        while self.soon:
            self.soon.pop(0)()

    def advance(self, seconds: float) -> None:
        """Move the clock, firing each timer that falls due (one wake-up each)."""
        self.now += seconds
        due = sorted((t for t in self.timers if t[0] <= self.now), key=lambda t: t[0])
        self.timers = [t for t in self.timers if t[0] > self.now]
        for _at, callback in due:
            self.wakeups += 1
            callback()
            self.run_soon()


def scheduler(host: FakeHost) -> tuple[Repaints, list[str], dict[str, bool]]:
    painted: list[str] = []
    shown = {"charts": True, "log": True, "timeline": True}
    repaints = Repaints(host, clock=lambda: host.now)
    repaints.panel("stages", lambda: painted.append("stages"))
    repaints.panel("charts", lambda: painted.append("charts"), visible=lambda: shown["charts"])
    repaints.panel("log", lambda: painted.append("log"), visible=lambda: shown["log"])
    repaints.panel(
        "timeline",
        lambda: painted.append("timeline"),
        interval=TABLE_INTERVAL_S,
        visible=lambda: shown["timeline"],
    )
    return repaints, painted, shown


def test_a_change_after_a_quiet_interval_is_painted_in_the_same_wake_up() -> None:
    host = FakeHost()
    repaints, painted, _shown = scheduler(host)
    repaints.mark("charts")
    assert repaints.pending and not host.timers
    host.run_soon()
    assert painted == ["charts"] and not repaints.pending


def test_a_burst_within_the_interval_is_coalesced_into_one_paint_at_its_end() -> None:
    host = FakeHost()
    repaints, painted, _shown = scheduler(host)
    repaints.mark("charts")
    host.run_soon()
    for _ in range(50):
        host.now += CHART_INTERVAL_S / 100
        repaints.mark("charts", "stages")
        host.run_soon()
    assert painted == ["charts"] and len(host.timers) == 1 and repaints.pending
    host.advance(CHART_INTERVAL_S)
    # One wake-up paints both panels of the interval, in the order they were registered.
    assert painted == ["charts", "stages", "charts"] and host.wakeups == 1
    assert not repaints.pending


def test_each_interval_caps_its_own_panels() -> None:
    host = FakeHost()
    repaints, painted, _shown = scheduler(host)
    for _ in range(20):  # two seconds of 10 changes a second
        repaints.mark("charts", "timeline")
        host.run_soon()
        host.advance(0.1)
    assert painted.count("charts") == 20
    assert 4 <= painted.count("timeline") <= 5  # at most twice a second


def test_a_hidden_panel_is_not_painted_and_catches_up_once_shown() -> None:
    host = FakeHost()
    repaints, painted, shown = scheduler(host)
    shown["log"] = False
    repaints.mark("log")
    assert not host.soon and not host.timers  # no wake-up for a hidden panel
    repaints.mark("log", "stages")
    host.run_soon()
    assert painted == ["stages"]
    assert repaints.hidden == {"log"} and not repaints.pending  # nothing to wait for
    repaints.shown()  # still hidden: nothing happens
    host.run_soon()
    assert painted == ["stages"]
    shown["log"] = True
    assert repaints.pending  # dirty and on display
    repaints.shown()
    host.advance(CHART_INTERVAL_S)
    assert painted == ["stages", "log"] and not repaints.hidden and not repaints.pending


def test_mark_all_paints_every_panel_once() -> None:
    host = FakeHost()
    repaints, painted, _shown = scheduler(host)
    repaints.mark_all()
    repaints.mark_all()
    host.run_soon()
    assert sorted(painted) == ["charts", "log", "stages", "timeline"]


def test_an_unknown_panel_is_an_error_not_a_silent_no_op() -> None:
    repaints, _painted, _shown = scheduler(FakeHost())
    with pytest.raises(KeyError, match="detail"):
        repaints.mark("detail")
    with pytest.raises(ValueError, match="stages"):
        repaints.panel("stages", lambda: None)


def test_a_timer_that_fires_while_the_screen_is_removed_paints_nothing() -> None:
    # A worker's event marked a panel after the screen's removal began; its timer fired
    # once the widgets were pruned, and painting them raised (KeyError on a pruned
    # widget's component styles, in a loaded suite).
    host = FakeHost()
    repaints, painted, _shown = scheduler(host)
    repaints.mark("charts")
    host.run_soon()
    repaints.mark("charts", "stages")  # within the interval: a timer
    assert host.timers and painted == ["charts"]
    host.closing = True
    host.advance(CHART_INTERVAL_S)
    assert painted == ["charts"]
