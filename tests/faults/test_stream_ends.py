"""Streams that end without their terminal event: a 204 mid-run, a 204 after an end never
seen, a backend restored from a backup, a load balancer that keeps closing the stream.

The client re-reads the run's snapshot whenever the stream ends early and reports what
it finds; `watch` exits with the run's outcome, never with 1 "running" and no reason.
Default policies throughout (the 1 s reconnect floor included).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ito_tui.client import ConnectionState, ItoClient
from ito_tui.contract import EventBase, event_to_json, make_event
from ito_tui.format import status_label
from tests.client import samples
from tests.client.conftest import envelope, sse
from tests.client.fakeserver import Conn, FakeServer, Received
from tests.tui.pipeline_live import live_app, shown_pipeline, start_run, wait_for

from .conftest import Tampered
from .hostile import raw_controls, run_cli
from .restored import TS, RestoredRun
from .test_injection import pending_proposal
from .test_reconnect_storms import EVENTS, SNAPSHOT, follow_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer().start()
    yield server
    server.stop()


def connection_lines(err: str) -> list[str]:
    words = ("connection", "reconnect", "204")
    return [line for line in err.splitlines() if any(w in line for w in words)]


async def test_a_204_while_the_run_is_running_rereads_the_snapshot_and_keeps_following(
    tampered: Any,
) -> None:
    t: Tampered = tampered(speed=20.0)
    run_id = await start_run(t.url, "happy")
    t.tamper.answer(EVENTS + "$", lambda i: (204, {}))
    since = time.monotonic()
    _, states, ended = await follow_for(t.url, run_id, 3.5)
    opened = t.tamper.count(EVENTS, since)
    assert not ended, "a 204 while the run is running is no reason to stop following"
    assert 2 <= opened <= 5, opened
    assert t.tamper.count(SNAPSHOT, since) <= opened
    waiting = [s for s in states if s.status == "reconnecting"]
    assert waiting and all("204" in (s.error or "") for s in waiting), waiting
    assert "still" in (waiting[-1].error or "")


@pytest.mark.parametrize(("scenario", "code"), [("happy", 0), ("gate-fail", 3)])
def test_watch_exits_with_the_outcome_when_the_end_came_as_204(
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    scenario: str,
    code: int,
) -> None:
    """The first stream is cut mid-run; from then on every stream request gets 204, so
    the terminal event never arrives: the snapshot says how the run ended."""
    t: Tampered = tampered(speed=60_000.0)
    run_id = asyncio.run(start_run(t.url, scenario))
    t.tamper.flap(0.3)
    t.tamper.answer(EVENTS + "$", lambda i: None if i == 0 else (204, {}))
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    got, out, err = run_cli(capsys, monkeypatch, "--backend", t.url, "watch", run_id)
    assert t.tamper.flaps == 1 and t.tamper.count(EVENTS) >= 2
    assert got == code, (out[-1500:], err[-1500:])
    assert "ended before the run's last event" in err, err
    outcome = "completed" if code == 0 else "gate_failed"
    assert f"run {run_id} {status_label(outcome)}" in out.splitlines()[-1], out[-500:]
    assert raw_controls(out + err) == []


async def test_the_stream_follows_a_backend_restored_from_a_backup(fake: FakeServer) -> None:
    run = RestoredRun(fake)
    events: list[EventBase] = []
    states: list[ConnectionState] = []
    async with ItoClient(fake.url, token=SecretStr("s3cret")) as client:
        async with asyncio.timeout(20):
            async for event in client.events(run.run_id, on_state=states.append):
                events.append(event)
    seqs = [(e.type, e.seq) for e in events]
    before = [("run.state_changed", s) for s in range(1, 21)]
    after = [("run.state_changed", s) for s in range(13, 19)]
    # Everything before the restore, the restored snapshot, then the restored numbering.
    assert seqs == [*before, ("resync", 12), *after, ("run.completed", 19)]
    assert run.last_event_ids == [None, "12"]
    said = [s.error for s in states if s.error and "backwards" in s.error]
    assert said and said[0].startswith("backend's event history went backwards from seq 20 to 12")


@pytest.mark.parametrize(("ended", "final", "code"), [(False, "completed", 0), (True, "failed", 4)])
def test_watch_says_the_history_went_backwards_and_reports_the_end(
    fake: FakeServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    ended: bool,
    final: str,
    code: int,
) -> None:
    run = RestoredRun(fake, ended_on_restore=ended, final=final)
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    got, out, err = run_cli(capsys, monkeypatch, "--backend", fake.url, "watch", run.run_id)
    assert got == code, (out[-1500:], err[-1500:])
    restored_to = run.end if ended else run.restored_to
    assert f"backend's event history went backwards from seq 20 to {restored_to}" in err, err
    lines = out.splitlines()
    # What was shown before the restore stays shown; the end is the restored run's.
    assert sum(" run.state_changed " in line for line in lines) >= 20
    if not ended:
        assert any(" 19 " in line and "run.completed" in line for line in lines), out
    assert f"run {run.run_id} {status_label(final)}" in lines[-1], out[-500:]


def test_a_flapping_stream_is_reported_once_then_summarised(
    tampered: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A load balancer ends the stream cleanly 0.3 s after each connect, with `retry: 0`."""
    t: Tampered = tampered(speed=25_000.0)
    run_id = asyncio.run(start_run(t.url, "happy"))
    t.tamper.flap(0.3)
    t.tamper.sse_retry(0)
    caplog.set_level(logging.INFO, "ito_tui.client.stream")
    monkeypatch.setenv("ITO_TOKEN", "s3cret")
    started = time.monotonic()
    code, out, err = run_cli(capsys, monkeypatch, "--backend", t.url, "watch", run_id)
    took = time.monotonic() - started
    assert code == 0, (out[-1500:], err[-1500:])
    assert t.tamper.flaps >= 3, t.tamper.flaps
    # At most one connect a second (the floor), whatever `retry: 0` says.
    assert t.tamper.count(EVENTS) <= took + 2
    lines = connection_lines(err)
    assert len(lines) <= 2, lines
    assert lines[0].startswith("connection lost")
    assert f"{t.tamper.flaps} reconnects" in lines[-1], lines
    logged = [r for r in caplog.records if r.name == "ito_tui.client.stream"]
    assert len([r for r in logged if r.levelno >= logging.INFO]) <= 2, logged


@pytest.mark.long(seconds=20)
async def test_the_pipeline_does_not_call_a_204_the_end_and_shows_the_outcome(
    tampered: Any, tmp_path: Path
) -> None:
    # The run waits for a person (a loss-spike proposal, its clock at 5x) until the app
    # has seen the 204s, then goes on at 10,000x to its end: however late a loaded
    # machine's app first connects, the run is running then (racing a run of ~20 s, one
    # once ended first, and then a 204 rightly closes the view).
    t: Tampered = tampered(speed=10_000.0, approval_speed=5.0)
    run_id = await start_run(t.url, "loss-spike")
    waiting = await pending_proposal(t.url, run_id)
    t.tamper.answer(EVENTS + "$", lambda i: (204, {}))
    app, _ = live_app(t.url, run_id, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(
            pilot,
            lambda: "reconnecting" in screen.connection,
            30,
            lambda: f"a reconnect; connection {screen.connection!r}, {screen.run_state.state}",
        )
        assert not screen.run_state.terminal
        assert "ended" not in screen.connection
        async with ItoClient(t.url, token=SecretStr("s3cret")) as client:
            await client.reject(waiting.proposal_id, comment="the 204 test goes on")
        await wait_for(pilot, lambda: screen.run_state.terminal, 30, "the run's end by snapshot")
        await wait_for(pilot, lambda: screen.connection.startswith("closed"), 5, "closed")
        assert screen.connection == "closed · run completed"
        assert screen.run_state.outcome == "completed"
        assert all(str(s.state) != "running" for s in screen.run_state.stages)
        if app.screen is not screen:  # the proposal's modal, opened with the run: closed
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen, 5, "the modal closed")
        await pilot.press("3")
        await pilot.pause(0.2)
        assert app.is_running
        assert str(app.screen.query_one("#tabs").active) == "tab-events"


async def test_a_resync_carrying_another_runs_snapshot_is_flagged_not_applied(
    fake: FakeServer,
) -> None:
    """A `resync` whose Run is another run's: an error naming the endpoint, never a re-seed."""
    other = make_event(
        "resync", seq=5, run_id="run_1", ts=TS, data=samples.run("run_2", 5, "completed")
    )

    @fake.route("GET", "/v1/runs/run_1/events")
    async def _(req: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "text/event-stream"})
        await conn.write(sse(1))
        await conn.write(sse(5, event_to_json(other)))
        await conn.write(sse(6, envelope(6, terminal=True)))
        await conn.end()

    states: list[ConnectionState] = []
    async with ItoClient(fake.url, token=SecretStr("s3cret")) as client:
        async with asyncio.timeout(10):
            events = [e async for e in client.events("run_1", on_state=states.append)]
    assert [(e.type, e.seq) for e in events] == [
        ("run.state_changed", 1),
        ("invalid:resync", 5),
        ("run.completed", 6),
    ]
    flagged = [s.error for s in states if s.error and "run_2" in s.error]
    assert flagged and flagged[0].startswith("GET /v1/runs/{id}/events: the resync of run")
