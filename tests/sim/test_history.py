"""`--history happy`: the desk starts with one finished run (the demo's previous run)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import httpx

from ito_tui.contract import now_utc
from ito_tui.desk_sim import create_app
from ito_tui.desk_sim.history import HISTORY_BOOKING
from ito_tui.desk_sim.server import config_from_args, parse_args
from tests.support.servers import ServerThread, SimHandle, sim_config


def test_an_empty_store_starts_with_one_finished_happy_run(
    sim_factory: Callable[..., SimHandle],
) -> None:
    sim = sim_factory(history="happy", scenario="showcase")
    runs = httpx.get(f"{sim.url}/v1/runs", headers=sim.headers()).json()["items"]
    assert [(r["booking_id"], r["state"]) for r in runs] == [(HISTORY_BOOKING, "completed")]
    run_id = runs[0]["run_id"]
    run = httpx.get(f"{sim.url}/v1/runs/{run_id}", headers=sim.headers()).json()
    assert run["spec"]["model_size"] == "8B"
    assert run["operator"] == "alice"
    page = httpx.get(
        f"{sim.url}/v1/runs/{run_id}/telemetry", params={"max_points": 200}, headers=sim.headers()
    ).json()
    stages = {s["stage"] for s in page["items"]}
    assert {"pretrain", "sft", "dpo"} <= stages
    tokens = [s["tokens_seen"] for s in page["items"] if s["stage"] == "pretrain"]
    assert len(tokens) > 50 and tokens == sorted(tokens)


def test_the_history_run_happened_in_the_past_inside_its_booking_window(
    sim_factory: Callable[..., SimHandle],
) -> None:
    """Its events carry the wall times of a week-long run that ended before the desk
    started (played on the real clock, all 800-odd carried the same second)."""
    before = now_utc()
    sim = sim_factory(history="happy")
    (run,) = httpx.get(f"{sim.url}/v1/runs", headers=sim.headers()).json()["items"]
    booking = httpx.get(f"{sim.url}/v1/bookings/{HISTORY_BOOKING}", headers=sim.headers()).json()
    events = httpx.get(
        f"{sim.url}/v1/runs/{run['run_id']}/events", params={"since_seq": 0}, headers=sim.headers()
    )
    stamps = [
        datetime.fromisoformat(json.loads(line.removeprefix("data:"))["ts"])
        for line in events.text.splitlines()
        if line.startswith("data:")
    ]
    assert len(stamps) > 100 and stamps == sorted(stamps)
    created, window = (datetime.fromisoformat(t) for t in (run["created_at"], booking["starts_at"]))
    assert window <= stamps[0] == created
    assert stamps[-1] <= before + timedelta(seconds=5)
    assert stamps[-1] - stamps[0] > timedelta(days=5)  # the 8B run took about a week
    # Stamped as it went, not all at once (a quantum's checkpoint, telemetry and progress
    # share the 5-minute step they fell in; a short stage's quanta share a few).
    assert len(set(stamps)) > len(stamps) // 6


def test_a_store_with_runs_gets_no_second_history_run(tmp_path: Path) -> None:
    db = tmp_path / "desk.db"
    for _ in range(2):  # the same store, started twice
        server = ServerThread(create_app(sim_config(db, history="happy")))
        port = server.start()
        try:
            runs = httpx.get(
                f"http://127.0.0.1:{port}/v1/runs", headers={"Authorization": "Bearer s3cret"}
            ).json()["items"]
        finally:
            server.stop()
        assert len(runs) == 1


def test_the_flag_names_a_scenario() -> None:
    assert config_from_args(parse_args(["--history", "happy"])).history == "happy"
    assert config_from_args(parse_args([])).history is None
