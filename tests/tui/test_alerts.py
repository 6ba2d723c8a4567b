"""The alert router: bursts coalesce, each key goes out once, and every channel (toast,
bell, title, desktop, command) obeys `[alerts]` per kind."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from textual.app import ScreenStackError

from ito_tui.alerting.ledger import SentLedger
from ito_tui.alerting.model import Alert
from ito_tui.config import Alerts
from ito_tui.tui import alerts
from ito_tui.tui.alerts import COALESCE_S, Alerter
from ito_tui.tui.textual_private import with_terminal

SLO = Alert("slo", "run_x", "SLO breached", "run_x: fault resume took 21 min (resume < 15 min).")
BUDGET = Alert("budget", "run_x", "Budget warning", "run_x: $80 of $100 spent (≥ 80%).")
EXPIRES = datetime(2026, 11, 29, 20, 3, 15, tzinfo=UTC)


def slo(seq: int, run_id: str = "run_x") -> Alert:
    return Alert("slo", run_id, SLO.title, SLO.summary, seq=seq)


def proposal(run_id: str = "run_b", pid: str = "prop_b_1") -> Alert:
    return Alert(
        "proposal",
        run_id,
        "Needs approval",
        f"{run_id}: rollback proposed; the run is paused until someone decides.",
        stage="pretrain",
        seq=7,
        proposal_id=pid,
        expires_at=EXPIRES,
        at=EXPIRES - timedelta(minutes=10),  # asked the same day: the expiry's time alone
    )


class FakeApp:
    """What `Alerter` uses of an App: notify, bell, set_timer (fired by the test), screen,
    settings and the terminal it writes sequences to (tests/tui/test_textual_private.py
    checks that a running app's reaches the driver)."""

    def __init__(self, settings: Alerts | None = None) -> None:
        self.settings = SimpleNamespace(alerts=settings or Alerts(desktop="off"))
        self.screen: Any = SimpleNamespace()
        self.toasts: list[tuple[str, str]] = []
        self.bells = 0
        self.timers: list[tuple[float, Callable[[], None]]] = []
        self.written: list[str] = []
        with_terminal(self, self.written.append)

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


class FakeHook:
    """A CommandHook's `submit`, recorded."""

    def __init__(self) -> None:
        self.submitted: list[Alert] = []

    def submit(self, alert: Alert) -> None:
        self.submitted.append(alert)


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
    assert app.toasts == [("SLO breached", SLO.summary)] and app.bells == 1
    assert len(app.timers) == 1 and app.timers[0][0] == pytest.approx(COALESCE_S, abs=0.7)
    clock[0] = 1000.0 + COALESCE_S
    app.fire()
    title, message = app.toasts[-1]
    assert title == "3,000 SLO breaches"
    assert message.startswith("2,999 more in under 1 s") and SLO.summary in message
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
    assert app.toasts[-1] == ("SLO breached", SLO.summary) and app.bells == 2


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
    alerter.alert(proposal(), toast=False)  # its modal opened: the modal is the notice
    alerter.alert(proposal(pid="prop_b_2"), toast=False)
    app.fire()
    assert app.toasts == [] and app.bells == 1


def test_each_alert_key_goes_out_once(clock: list[float]) -> None:
    """The watcher and the pipeline of the same run both raise its events: one goes out."""
    app: Any = FakeApp(Alerts(desktop="osc9", command=("true",)))
    hook = FakeHook()
    alerter = Alerter(app, ledger=SentLedger(None), hook=hook, environ={})  # type: ignore[arg-type]
    assert alerter.alert(slo(5)) is True
    assert alerter.alert(slo(5)) is False  # the other source, or a reconnect's replay
    assert alerter.alert(slo(6)) is True  # a new seq: counted into the burst
    assert [a.seq for a in hook.submitted] == [5, 6]  # the hook coalesces on its own
    assert len(alerter.sent) == 2 and app.bells == 1
    assert len([w for w in app.written if w.startswith("\x1b]9;")]) == 1  # one per burst


def test_the_kinds_table_picks_channels_per_kind(clock: list[float]) -> None:
    settings = Alerts(desktop="osc777", command=("true",), kinds={"slo": frozenset({"toast"})})
    app: Any = FakeApp(settings)
    hook = FakeHook()
    alerter = Alerter(app, hook=hook, environ={})  # type: ignore[arg-type]
    alerter.alert(slo(1))
    alerter.alert(BUDGET)
    assert [t for t, _ in app.toasts] == ["SLO breached", "Budget warning"]
    assert app.bells == 1 and [a.kind for a in hook.submitted] == ["budget"]
    notifications = [w for w in app.written if w.startswith("\x1b]777;")]
    assert notifications == ["\x1b]777;notify;ito: Budget warning;run_x\x07"]


def test_a_desktop_notification_inside_tmux_is_wrapped_for_its_passthrough(
    clock: list[float],
) -> None:
    app: Any = FakeApp(Alerts(desktop="osc9"))
    alerter = Alerter(app, environ={"TMUX": "/tmp/tmux-1000/default,1,0"})
    alerter.alert(proposal())
    assert app.written[0] == (
        "\x1bPtmux;\x1b\x1b]9;ito: Needs approval: run_b, pretrain, expires 20:03:15 UTC\x07\x1b\\"
    )
    assert alerter.desktop_sent == 1


def test_desktop_auto_sends_nothing_to_a_terminal_it_does_not_know(clock: list[float]) -> None:
    app: Any = FakeApp(Alerts(desktop="auto"))
    alerter = Alerter(app, environ={"TERM": "xterm-256color"})
    alerter.alert(proposal())
    assert app.written == [] and app.bells == 1


def test_no_proposal_toast_when_its_modal_or_its_runs_pipeline_is_on_top(
    clock: list[float],
) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    # The run's pipeline opens the proposal's modal itself: the modal is the notice.
    app.screen = SimpleNamespace(run_id="run_b", open_proposal=lambda pid=None: True)
    alerter.alert(proposal(pid="prop_b_1"))
    app.screen = SimpleNamespace(shows=lambda pid: pid == "prop_b_2", HOLDS_TOASTS=True)
    alerter.alert(proposal(pid="prop_b_2"))
    assert app.toasts == [] and app.bells == 1  # the second rang in the first's burst
    app.fire()  # the window's end: a summary, but neither of the two wanted a toast
    assert app.toasts == []
    # Another run's proposal, over a modal that holds toasts: held, shown when it closes.
    clock[0] = 1010.0
    alerter.alert(proposal("run_c", "prop_c_1"))
    assert app.toasts == [] and app.bells == 2
    app.screen = SimpleNamespace()
    alerter.release()
    assert [t for t, _ in app.toasts] == ["Needs approval"]


def test_the_title_names_what_needs_you_in_other_runs(clock: list[float]) -> None:
    app: Any = FakeApp()
    alerter = Alerter(app)
    alerter.set_title("ito · run_a · pretrain 42%", "run_a")
    alerter.needs_you_changed(("run_a",))  # its own proposal: the base title says so
    alerter.needs_you_changed(("run_a", "run_b"))
    alerter.alert(Alert("gate_failed", "run_c", "Gate failed", "run_c: …", "error", seq=3))
    alerter.alert(Alert("budget", "run_a", "Budget warning", "run_a: …", seq=9))  # its own
    alerter.set_title("ito · run_c · mid-train · GATE FAILED", "run_c")  # run_c opened
    titles = [w[4:-1] for w in app.written if w.startswith("\x1b]2;")]
    assert titles == [
        "ito · run_a · pretrain 42%",
        "ito · run_a · pretrain 42% · ⚠ 2 NEED YOU",
        "ito · run_a · pretrain 42% · ⚠ 2 NEED YOU · ⚠ run_c: Gate failed",
        "ito · run_c · mid-train · GATE FAILED · ⚠ 2 NEED YOU",
    ]


def test_the_title_switch_off_writes_no_title(clock: list[float]) -> None:
    app: Any = FakeApp(Alerts(title=False, desktop="off"))
    alerter = Alerter(app)
    alerter.set_title("ito · run_a", "run_a")
    alerter.needs_you_changed(("run_b",))
    alerter.alert(Alert("gate_failed", "run_c", "Gate failed", "run_c: …", "error", seq=3))
    assert app.written == [] and alerter.title is None


def test_only_the_runs_the_settings_name_alert(clock: list[float]) -> None:
    app: Any = FakeApp(Alerts(desktop="off", runs=("run_a",)))
    alerter = Alerter(app, ledger=SentLedger(None))
    assert alerter.alert(slo(1, "run_b")) is False  # its pipeline on screen or not
    assert alerter.alert(slo(2, "run_a")) is True
    assert [a.run_id for a in alerter.sent] == ["run_a"] and app.bells == 1


class ClosingApp(FakeApp):
    """A FakeApp whose screens are gone (it is closing), as Textual says it."""

    closing = False

    @property  # type: ignore[override]
    def screen(self) -> Any:
        if self.closing:
            raise ScreenStackError("No screens on stack")
        return SimpleNamespace()

    @screen.setter
    def screen(self, value: Any) -> None:
        pass


def test_a_summary_due_while_the_app_closes_is_dropped_not_raised(clock: list[float]) -> None:
    app: Any = ClosingApp()
    alerter = Alerter(app)
    for i in range(3):
        clock[0] = 1000.0 + i * 0.1
        alerter.alert(SLO)
    assert len(app.toasts) == 1 and len(app.timers) == 1  # the burst's summary is due
    app.closing = True
    clock[0] = 1000.0 + COALESCE_S
    app.fire()  # the timer fires after the last screen went: it must not fail the app
    assert len(app.toasts) == 1 and app.bells == 1
    alerter.release()
    alerter.alert(BUDGET)  # nor does an alert raised then
    assert len(app.toasts) == 1 and [a.kind for a in alerter.sent][-1] == "budget"
