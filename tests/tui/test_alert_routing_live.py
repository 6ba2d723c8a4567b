"""The app's alerts beyond the pane, against a real desk_sim: the command hook gets each
alert as JSON, an alert goes out once across a restart, and 100 alerts in a burst leave
the keys working (and the hook's processes bounded)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.alerting.model import Alert, AlertKind, alert_for
from ito_tui.client import ItoClient
from ito_tui.config import Alerts
from ito_tui.desk_sim import create_app
from ito_tui.state import RunState
from ito_tui.tui.screens.bookings import BookingsScreen
from ito_tui.tui.screens.login import LoginModal
from ito_tui.tui.screens.runs import RunsScreen
from tests.faults.tamper import Tamper

from .live_alerts import PROPOSAL_SCALE, alert_app, following
from .pipeline_live import start_run, wait_for
from .shell_helpers import isolated_user_dirs, screen_text  # noqa: F401 (autouse fixture)

pytestmark = pytest.mark.slow

RECORDER = """\
import pathlib, sys, uuid
out = pathlib.Path(sys.argv[1])
part = out / f"{uuid.uuid4().hex}.part"
part.write_bytes(sys.stdin.buffer.read())
part.rename(part.with_suffix(".json"))
"""
"""An alert command that keeps what it read on stdin, one file per run (renamed into place
once whole: a test that read it half-written found an empty file)."""


def recorder(tmp_path: Path) -> tuple[tuple[str, ...], Path]:
    script, out = tmp_path / "record.py", tmp_path / "hook-out"
    script.write_text(RECORDER, encoding="utf-8")
    out.mkdir()
    return (sys.executable, str(script), str(out)), out


def recorded(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*.json"))]


async def proposal_event(url: str, run_id: str) -> Any:
    """Run `run_id`'s proposal.created event as the backend replays it."""
    async with ItoClient(url, token=SecretStr("s3cret")) as client:
        stream = client.events(run_id, since_seq=0)
        try:
            async for event in stream:
                if event.type == "proposal.created":
                    return event
        finally:
            await stream.aclose()
    raise AssertionError("no proposal.created")


@pytest.mark.long(seconds=13)
async def test_the_command_hook_gets_each_alert_as_json(
    sim_factory: Callable[..., Any], tmp_path: Path
) -> None:
    sim = sim_factory(approval_speed=5.0)
    argv, out = recorder(tmp_path)
    app = alert_app(sim.url, alerts=Alerts(desktop="off", command=argv))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        await wait_for(pilot, lambda: app.alerting.watcher is not None)
        run_b = await start_run(sim.url, "showcase", time_scale=PROPOSAL_SCALE)
        await following(pilot, app, run_b)
        await wait_for(pilot, lambda: bool(app.needs_you.pending), 60, "run B's proposal")
        hook = app.alerter.hook
        assert hook is not None
        await wait_for(pilot, lambda: any(r["kind"] == "proposal" for r in recorded(out)), 30)
    [body] = [r for r in recorded(out) if r["kind"] == "proposal"]
    pending = app.needs_you.pending[0]
    assert body["run_id"] == run_b and body["proposal_id"] == pending.proposal_id
    assert body["stage"] == "pretrain" and body["severity"] == "warning"
    assert body["summary"].startswith(f"{run_b}: ") and body["at"].endswith("Z")
    assert body["expires_at"].endswith("Z") and isinstance(body["seq"], int)
    raw = "".join(p.read_text(encoding="utf-8") for p in out.glob("*.json"))
    assert sim.token not in raw
    assert hook.failed == 0 and hook.timed_out == 0


@pytest.mark.long(seconds=14)
async def test_an_alert_goes_out_once_across_a_restart(
    sim_factory: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory(approval_speed=5.0)
    first = alert_app(sim.url)
    async with first.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: first.alerting.watcher is not None)
        run_b = await start_run(sim.url, "showcase", time_scale=PROPOSAL_SCALE)
        await following(pilot, first, run_b)
        await wait_for(pilot, lambda: bool(first.needs_you.pending), 60, "run B's proposal")
        await wait_for(pilot, lambda: any(a.kind == "proposal" for a in first.alerter.sent))
    # The same event again after a restart (a restored backend replaying it, a resumed
    # stream, the other source): the state dir remembers it went out.
    event = await proposal_event(sim.url, run_b)
    alert = alert_for(event, RunState.empty(run_b))
    assert alert is not None
    again = alert_app(sim.url, start="bookings")
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: again.alerting.watcher is not None)
        bells = again.bells
        assert again.alerter.alert(alert) is False
        assert again.bells == bells
    # Another state dir has no such memory: the same alert goes out there.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-state"))
    other = alert_app(sim.url, start="bookings")
    async with other.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: other.alerting.watcher is not None)
        bells = other.bells
        assert other.alerter.alert(alert) is True
        assert other.bells == bells + 1


@pytest.mark.faults
async def test_keys_work_in_order_during_a_burst_of_100_alerts(
    tmp_path: Path, serve_asgi: Callable[[Any], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.servers import sim_config

    tamper = Tamper(create_app(sim_config(tmp_path / "burst.db", speed=2_000.0)))
    url = serve_asgi(tamper)
    armed = threading.Event()  # read on the server's thread

    def breach(envelope: dict[str, Any]) -> dict[str, Any]:
        data = {"slo": "resume", "fault_id": None, "value_s": 1260.0, "limit_s": 900.0}
        return {**envelope, "type": "slo.breached", "data": data}

    tamper.burst(100, breach, lambda e: armed.is_set() and e.get("type") == "telemetry")
    argv, out = recorder(tmp_path)
    app = alert_app(url, alerts=Alerts(desktop="off", command=argv))
    screens: list[str] = []
    run_a = await start_run(url, "happy")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the runs list")
        await following(pilot, app, run_a)
        app.screen_change_signal.subscribe(app, lambda s: screens.append(type(s).__name__))
        bells = app.bells
        armed.set()
        await wait_for(pilot, lambda: tamper.offset > 0, 30, "the burst to be sent")
        # Keys typed while the app applies the burst: handled, in order.
        await pilot.press("ctrl+o", "ctrl+r", "ctrl+o")
        await wait_for(pilot, lambda: len(screens) >= 3, 30, "three screen changes")
        assert screens[:3] == ["BookingsScreen", "RunsScreen", "BookingsScreen"]
        assert isinstance(app.screen, BookingsScreen)
        await wait_for(pilot, lambda: "100 SLO breaches" in screen_text(pilot), 15, "summary")
        hook = app.alerter.hook
        assert hook is not None
        await wait_for(pilot, lambda: not hook.busy, 30, "the hook to finish")
    slo = [a for a in app.alerter.sent if a.kind == "slo"]
    assert len(slo) == 100 and app.bells - bells == 1
    # At most one process of a kind at a time: 100 alerts are two runs, the second
    # carrying the count of those it stands for; every alert delivered or coalesced.
    bodies = [b for b in recorded(out) if b["kind"] == "slo"]
    assert len(bodies) == hook.delivered == 2, bodies
    assert hook.delivered + hook.coalesced == 100
    assert bodies[-1].get("coalesced") == 98 or bodies[0].get("coalesced") == 98


async def test_a_failing_command_is_one_toast_whatever_the_alerts(
    sim_factory: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = sim_factory()
    missing = str(tmp_path / "no-such-notifier")
    app = alert_app(sim.url, start="bookings", alerts=Alerts(desktop="off", command=(missing,)))
    shown: list[tuple[str, str, bool]] = []
    notify = app.notify

    def recording_notify(message: str, *, title: str = "", **kw: Any) -> None:
        shown.append((title, message, kw.get("markup", True)))
        notify(message, title=title, **kw)

    monkeypatch.setattr(app, "notify", recording_notify)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.alerting.watcher is not None)
        hook = app.alerter.hook
        assert hook is not None
        kinds: tuple[AlertKind, ...] = ("slo", "budget", "gate_failed")
        for seq, kind in enumerate(kinds, 1):  # three kinds: three processes, each fails
            app.alerter.alert(Alert(kind, "run_x", "Title", "run_x: …", seq=seq))
        await wait_for(pilot, lambda: hook.failed >= 1, 20, "the first failure")
        # (The program's path is cut to 80 characters in it: pytest's are long.)
        await wait_for(pilot, lambda: "Alert command failed" in screen_text(pilot), 5, "toast")
        await wait_for(pilot, lambda: hook.failed == 3, 20, "three failures")
        await pilot.pause(0.3)
        failures = [(m, markup) for t, m, markup in shown if t == "Alert command failed"]
        assert len(failures) == 1, shown
        ((message, markup),) = failures
        assert markup is False and "not found" in message
        assert app.is_running


@pytest.mark.faults
async def test_a_token_revoked_under_the_watcher_asks_to_log_in(
    tmp_path: Path, serve_asgi: Callable[[Any], str]
) -> None:
    from tests.support.servers import sim_config

    tamper = Tamper(create_app(sim_config(tmp_path / "revoked.db")))
    url = serve_asgi(tamper)
    app = alert_app(url, start="bookings")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BookingsScreen) and app.screen.loaded)
        await wait_for(pilot, lambda: app.alerting.watcher is not None)
        tamper.revoke()  # only the watcher asks anything of the backend from here on
        await wait_for(pilot, lambda: isinstance(app.screen, LoginModal), 15, "the login prompt")
        asked = len(tamper.after_revocation())
        await pilot.pause(2.5)  # more than two of the watcher's polls
        assert len(tamper.after_revocation()) == asked  # it stopped while the prompt waits
        assert app.alerting.watcher is None
        # A new token (here: the old one, accepted again) and it watches again.
        tamper.revoked_at = None
        await pilot.press(*"s3cret", "enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, LoginModal), 15, "logged in")
        await wait_for(pilot, lambda: app.alerting.watcher is not None, 15, "a new watcher")
        watcher = app.alerting.watcher
        await wait_for(pilot, lambda: watcher.polls >= 1, 15, "it lists the runs")
