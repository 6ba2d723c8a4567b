"""The TUI under a burst of 3,000 SLO breaches: one alert, a count a window, each one logged.

A real desk_sim behind `Tamper`: once the pipeline screen follows the run live, the next
telemetry event is sent as 3,000 `slo.breached` events in one write (`Tamper.burst`). The
key→screen latency during such a burst is a benchmark (`python -m bench alert_burst`), not
a timed assertion here.
"""

from __future__ import annotations

import math
import threading
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from ito_tui.alerting.model import ALERT_KINDS
from ito_tui.config import Alerts
from ito_tui.tui.alerts import COALESCE_S
from tests.tui.pipeline_live import capture_titles, live_app, shown_pipeline, start_run, wait_for

from .conftest import Tampered

pytestmark = [pytest.mark.faults, pytest.mark.slow]
SPEED = 2_000.0
"""Slow enough that the run is still going when the burst comes, and after it."""
BURST = 3_000


def breach(envelope: dict[str, Any]) -> dict[str, Any]:
    """An `slo.breached` in place of `envelope` (a resume that took 21 min against 15)."""
    data = {"slo": "resume", "fault_id": None, "value_s": 1260.0, "limit_s": 900.0}
    return {**envelope, "type": "slo.breached", "data": data}


async def test_a_burst_of_slo_breaches_is_one_alert_with_a_count_and_keys_still_work(
    tampered: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t: Tampered = tampered(speed=SPEED)
    armed = threading.Event()  # read on the server's thread
    t.tamper.burst(BURST, breach, lambda e: armed.is_set() and e.get("type") == "telemetry")
    run_id = await start_run(t.url, "happy")
    # Only the SLO alerts ring: on a loaded machine the run can reach another alert (its
    # end, a budget warning) during the burst, whose bell is not this test's.
    quiet = {kind: frozenset({"toast", "title"}) for kind in ALERT_KINDS if kind != "slo"}
    app, _ = live_app(t.url, run_id, tmp_path, alerts=Alerts(kinds=quiet))
    toasts: list[tuple[str, str]] = []
    bells: list[None] = []
    notify, bell = app.notify, app.bell

    def counting_notify(message: str, *, title: str = "", **kw: Any) -> None:
        toasts.append((title, message))
        notify(message, title=title, **kw)

    def counting_bell() -> None:
        bells.append(None)
        bell()

    monkeypatch.setattr(app, "notify", counting_notify)
    monkeypatch.setattr(app, "bell", counting_bell)
    titles = capture_titles(monkeypatch)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await shown_pipeline(pilot, app)
        await wait_for(pilot, lambda: screen.connection == "live", 30, "the live stream")
        logged: list[int] = []
        logged_at: list[float] = []
        append = screen.tracker.log.append

        def logging_append(event: Any) -> Any:
            entry = append(event)
            if entry is not None and entry.type == "slo.breached":
                logged.append(entry.seq)
                logged_at.append(time.monotonic())
            return entry

        monkeypatch.setattr(screen.tracker.log, "append", logging_append)
        titled, rung = len(titles), len(bells)
        armed.set()
        await wait_for(pilot, lambda: t.tamper.offset > 0, 30, "the burst to be sent")
        await wait_for(pilot, lambda: bool(logged), 30, "the burst to arrive")
        await pilot.press("3")  # while the burst is being applied
        tabs = screen.query_one(TabbedContent)
        await wait_for(pilot, lambda: tabs.active == "tab-events", 30, "the Events tab")
        await wait_for(pilot, lambda: len(logged) >= BURST, 60, "every breach in the log")
        await wait_for(
            pilot, lambda: any("3,000" in title for title, _ in toasts), 10, "the summary"
        )
        await pilot.press("1")  # and the keys still work after it
        await wait_for(pilot, lambda: tabs.active == "tab-telemetry", 10, "the Telemetry tab")
        slo_toasts = [(title, m) for title, m in toasts if "SLO" in title]
        assert app.is_running
    # Every breach reached the event log, once each and in order; it keeps the newest.
    assert logged == list(range(logged[0], logged[0] + BURST))
    kept = [e.seq for e in screen.tracker.log if e.type == "slo.breached"]
    assert kept and kept == logged[-len(kept) :]
    # One toast and one bell for the first, then a summary with the count per window the
    # burst lasted (one, unless the machine is slow to apply it): not 3,000 of each.
    windows = 1 + math.ceil((logged_at[-1] - logged_at[0]) / COALESCE_S)
    first, *summaries = slo_toasts
    assert first[0] == "SLO breached", first
    assert 1 <= len(summaries) <= windows, (windows, slo_toasts[:5])
    assert summaries[-1][0] == "3,000 SLO breaches", summaries[-1]
    more = [int(m.split(" more in ", 1)[0].replace(",", "")) for _, m in summaries]
    assert sum(more) == BURST - 1, summaries
    assert len(bells) - rung == 1
    # The title follows the run (stage, progress), written once per change: not per alert.
    written = titles[titled:]
    assert len(written) <= 20 and all(a != b for a, b in pairwise(written)), written
